import { defineConfig } from 'vitest/config';

/** The fuzz watchdog (test/fuzz) measures the event loop: it runs in a group of its own, after every other file. */
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: ['test/fuzz/**'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'fuzz',
          include: ['test/fuzz/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          execArgv: ['--expose-gc'],
          testTimeout: 15 * 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
