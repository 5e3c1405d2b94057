/** Every table, for drizzle-kit and for `drizzle(client, { schema })`. */
export * from './tenancy.js';
export * from './grants.js';
export * from './events.js';
