/** Every table, for drizzle-kit and for `drizzle(client, { schema })`. */
export * from './tenancy.js';
export * from './grants.js';
export * from './events.js';
export * from './webhooks.js';
export * from './mail.js';
export * from './calendar.js';
export * from './outbound.js';
export * from './admin.js';
export * from './deliverability.js';
export * from './connected.js';
export * from './dmarc.js';
export * from './connectors.js';
export * from './access-log.js';
export * from './oversight.js';
export * from './oauth.js';
export * from './dav.js';
export * from './holds.js';
