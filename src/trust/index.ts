/**
 * @module trust
 * The front door of src/trust/: the `trust` block of a received message (issue 35, item 5) as pure functions over data
 * the caller gathers. {@link assessTrust} makes the whole block; the parts are exported for rules and tests.
 */
export { assessContent, assessTrust, lookalikeDomain, referenceDomains, type ContentTrust } from './assess.js';
export { createTrustReader } from './trust-reader.js';
export {
  authResultOf,
  authenticationVerdicts,
  parseAuthenticationResults,
  verdictsFromHeader,
  verdictsFromStored,
  type ParsedAuthenticationResults,
} from './authentication.js';
export { BRANDS, displayNameSpoof, nameKey, type DisplayNameContext } from './display-name.js';
export { boundedEditDistance, lookalikeOf, registrableDomain, skeleton, unicodeDomain } from './domains.js';
export { injectionScore, normaliseForScan, SIGNALS, type InjectionInput } from './injection.js';
export { domainOfToken } from './link-text.js';
export { linkMismatches, type TrustLink } from './links.js';
export { readTrustBody, type TrustBody } from './body.js';
export { forgedThread, isReplySubject, normaliseMessageId, type ThreadClaim } from './thread.js';
export * from './contracts.js';
