/**
 * @module storage
 * Schema, migrations and data access. Never imports from `src/`.
 */
export {
  beginReadScope,
  preparedRead,
  readAll,
  type PreparedQuery,
  type PreparedReadOptions,
  type ReadQuery,
} from './engine/fast-read.js';
export { createDb, migrate, type Database, type CreateDbOptions, type ThreadExitListener } from './db.js';
export type { Executor, Orm, Tx } from './orm.js';
export * as tables from './schema/index.js';
export { SYSTEM_FOLDERS, type SystemFolder } from './schema/grants.js';
export { findGrantByRef, findGrantByEmail, type GrantRow } from './repositories/grant-repository.js';
export { onClockOf } from './repositories/application-clock.js';
export {
  breathe,
  putBlob,
  putBlobs,
  readBlob,
  readMessageRaw,
  readBlobChunks,
  blobSize,
  blobHash,
  releaseBlobs,
  BLOB_CHUNK_BYTES,
  type BlobInput,
} from './repositories/blob-repository.js';
export { indexMessageTexts, matchesSearch, toFtsQuery, type SearchDocument } from './mail-search.js';
export type { StoredAddress, StoredMessageVerdict } from './schema/mail.js';
export type {
  StoredPolicyLimits,
  StoredSpamDetection,
  StoredPolicyOptions,
  StoredPolicyOversight,
  StoredOversightMode,
  StoredRuleCondition,
  StoredRuleAction,
  StoredEvaluationInput,
  StoredAppliedActions,
} from './schema/admin.js';
export type { StoredApprovalCheck, StoredHeldAttachment, StoredHeldComposition } from './schema/oversight.js';
export { createGroupCommit, type GroupCommit, type GroupCommitOptions } from './engine/group-commit.js';
export { startWalCheckpointer, type WalCheckpointer, type WalCheckpointerOptions } from './engine/wal-checkpointer.js';
export {
  createMailWriter,
  MailWriteError,
  type MailWriter,
  type MailWriterOptions,
  type MailRawJob,
  type MailRawOutcome,
  type MailRawGroup,
  type MailRawGroupOutcome,
  type MailPrepare,
  type MailWriteItem,
  type MailWriteCopy,
  type MailWriteBlob,
  type MailWriteResult,
  type DailyUsageIncrement,
} from './engine/mail-writer.js';
export { addDailyUsage, dailyUsageOf, storedBytesOf } from './repositories/usage-repository.js';
export {
  foldIntoThread,
  mergeParticipants,
  newThread,
  union,
  MAX_THREAD_PARTICIPANTS,
  SENT_FOLDER,
  DRAFTS_FOLDER,
  dateKindOf,
} from './repositories/thread-aggregates.js';
export {
  createDatabaseProbe,
  countJobsByState,
  type DatabaseProbe,
  type ProbeResult,
} from './repositories/status-repository.js';
export type { ImapSyncState } from './schema/connected.js';
