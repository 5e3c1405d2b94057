import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './storage/schema/index.ts',
  out: './storage/migrations',
  casing: 'snake_case',
});
