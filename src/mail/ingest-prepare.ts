/**
 * @module mail/ingest-prepare
 * The prepare module of the mail writer thread (storage/engine/mail-writer.ts, `MailPrepare`): for a message the fast
 * path reads (text parts only, alone or in a multipart/alternative or /mixed, see ./simple-mime.ts), the parse, the normalisation and the rows are made on
 * the writer thread itself, beside the writes. Each such message then crosses between threads once, instead of
 * going to a parser thread, back to the event loop, and on to the writer. Anything else is declined, and the inbound
 * path parses it on the parser pool as before (./inbound.ts).
 * The writer thread loads it by URL (INGEST_PREPARE_MODULE in ./inbound.ts, found by storage/engine/worker-module.ts).
 */
import type { DailyUsageIncrement, MailWriteItem } from '../../storage/index.js';
import { asDelivery, writeItemOf, type NewMessage } from '../messages/for-workers.js';
import { normalize, sha256, parseSimpleMessage } from '../mime/for-workers.js';

/** What the inbound path sends with the bytes (`storeRaw` in ./inbound-write.ts). */
interface RawDeliveryMeta {
  /** One per mailbox: a NewMessage without `parsed`, `raw` and `rawHash`. */
  copies: Omit<NewMessage, 'parsed' | 'raw' | 'rawHash'>[];
  /** The ids the rows take, in the order `writeItemOf` asks for them. */
  ids: string[];
  /** Unix seconds, for the rows' times. */
  at: number;
  /** Stored in the same transaction (see MailWriteItem). */
  evaluations?: MailWriteItem['evaluations'];
  dailyUsage?: DailyUsageIncrement[];
  /** Job rows stored in the same transaction (replies to tracked sends). */
  jobs?: MailWriteItem['jobs'];
  /** A connected account's message: its IMAP link rows (see MailWriteItem). */
  imapLinks?: MailWriteItem['imapLinks'];
}

/** Prepares a raw message, or returns undefined when the fast path cannot read it. */
export function prepare(
  bytes: Uint8Array,
  meta: unknown,
): { item: MailWriteItem; summary: { from: NewMessage['parsed']['from'] } } | undefined {
  const { copies, ids, at, evaluations, dailyUsage, jobs, imapLinks } = meta as RawDeliveryMeta;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const mail = parseSimpleMessage(raw);
  if (!mail) return undefined;
  const { value } = normalize(mail);
  // The fast path never yields attachments: a message with any is mailparser's.
  if (value.attachments.length > 0) return undefined;
  const parsed = { ...value, attachments: [] };
  const delivery = asDelivery(copies.map((copy): NewMessage => ({ ...copy, parsed, raw, rawHash: '' })));
  // The hash names a blob: a raw message stored inline has none, and needs no hash.
  const rawHash = delivery[0]?.rawInline ? '' : sha256(raw);
  let next = 0;
  const newId = () => {
    const id = ids[next++];
    if (id === undefined) throw new Error('ingest-prepare: more ids asked for than were sent');
    return id;
  };
  const item = writeItemOf(
    delivery.map((copy) => ({ ...copy, rawHash })),
    { newId, at },
  );
  if (evaluations && evaluations.length > 0) item.evaluations = evaluations;
  if (dailyUsage && dailyUsage.length > 0) item.dailyUsage = dailyUsage;
  if (jobs && jobs.length > 0) item.jobs = jobs;
  if (imapLinks && imapLinks.length > 0) item.imapLinks = imapLinks;
  return { item, summary: { from: parsed.from } };
}
