/**
 * @module outbound/composition
 * A message to send, from request to bytes: the request validated and resolved ({@link Composition}: the sender
 * checked against the mailbox, recipients counted, attachments read, the message answered found with its whole
 * References chain), then composed once into MIME (Message-ID on the sender's domain, Date from the clock, DKIM
 * for verified custom domains) within the 40 MB limit. Sends and drafts share it.
 *
 * The composer is plain functions over a small state made here (./composition-state.ts): the request resolved
 * (./composition-prepare.ts) and the MIME composed and signed (./composition-mime.ts).
 */
import type { GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import type { NewMessage } from '../messages/index.js';
import type { AttachmentInput } from '../schemas/send.js';
import { parsedOf, type ComposeInput } from './compose.js';
import type { AttachmentUploads, Built, Composer, ComposeRequest, Composition } from './contracts.js';
import { build, sign, signedMime } from './composition-mime.js';
import { prepare, resolveAttachments } from './composition-prepare.js';
import type { ComposerState } from './composition-state.js';

/** The sender's own copy of a composed message (the sent copy, or a draft version), for the mail store. */
export function ownCopy(
  composition: Composition,
  built: Built,
  place: Pick<NewMessage, 'folders' | 'unread' | 'date' | 'envelopeFrom'>,
): NewMessage {
  return {
    applicationId: composition.grant.applicationId,
    grantId: composition.grant.id,
    parsed: parsedOf(built.input),
    raw: built.raw,
    rawHash: built.rawHash,
    ...place,
    envelopeTo: null,
    parseError: null,
    metadata: composition.metadata,
  };
}

/** Creates the composer: requests to compositions, compositions to signed MIME. */
export function createComposer(
  deps: Pick<CoreDeps, 'db' | 'secrets'>,
  parts: { uploads?: Pick<AttachmentUploads, 'staged'> } = {},
): Composer {
  const state: ComposerState = { db: deps.db, secrets: deps.secrets, uploads: parts.uploads };

  return {
    prepare: (principal: Principal, grant: GrantRow, input: ComposeRequest, mode: 'send' | 'draft') =>
      prepare(state, principal, grant, input, mode),
    build: (composition: Composition, headerMessageId: string, date: Date) =>
      build(state, composition, headerMessageId, date),
    signedMime: (input: ComposeInput) => signedMime(state, input),
    sign: (raw: Buffer, fromEmail: string) => sign(state, raw, fromEmail),
    resolveAttachments: (grant: GrantRow | undefined, inputs: AttachmentInput[]) =>
      resolveAttachments(state, grant, inputs),
  };
}
