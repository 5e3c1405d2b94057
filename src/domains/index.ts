/**
 * @module domains
 * The front door of src/domains/: what other areas, the operations and the faces use of it.
 */
export {
  DmarcReportRejected,
  findReportFile,
  MAX_COMPRESSED_BYTES,
  MAX_EMAIL_BYTES,
  MAX_RATIO,
  MAX_RECORDS,
  MAX_XML_BYTES,
  readAggregateReport,
  readAggregateXml,
  reportXml,
  type AggregateReport,
} from './dmarc-report-parser.js';
export type { DmarcReceiveOutcome, DmarcReportIntake, DomainService, RuaCheck } from './contracts.js';
export { createDmarcReportIntake, ruaDomain } from './dmarc-reports.js';
export {
  domainOfAddress,
  domainPausedError,
  domainWindowTotals,
  pauseDomainSending,
  recordDomainReport,
  reputationOf,
  sendingDomainOf,
} from './domain-reputation.js';
export { isDomainUsable, toDomain } from './domain-mapper.js';
export { DMARC_RUA_LOCAL_PART } from './domain-records.js';
export { createDomainService } from './domain-service.js';
