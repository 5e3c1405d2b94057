/**
 * @module oversight/oversight-store
 * What the send gate reads: the message a send answers, a thread's participants, the flagged messages a reader read within a window; and the
 * untrusted-read gate's one write (a flagged read, kept per reader and message).
 */
import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import { tables, type Database, type StoredMessageVerdict } from '../../storage/index.js';

const { messages, untrustedReads } = tables;

/** Every address (lower-cased) that wrote or was written to in a thread of a grant. */
export async function threadParticipants(db: Database, grantId: string, threadId: string): Promise<Set<string>> {
  const rows = await db.orm
    .select({
      from: messages.fromAddresses,
      to: messages.toAddresses,
      cc: messages.ccAddresses,
      replyTo: messages.replyToAddresses,
    })
    .from(messages)
    .where(and(eq(messages.grantId, grantId), eq(messages.threadId, threadId)))
    .limit(500);
  const participants = new Set<string>();
  for (const row of rows)
    for (const address of [...row.from, ...row.to, ...row.cc, ...row.replyTo])
      if (address.email) participants.add(address.email.toLowerCase());
  return participants;
}

/** The thread of a message of a grant, when it exists. */
export async function threadOfMessage(db: Database, grantId: string, messageId: string): Promise<string | undefined> {
  const [row] = await db.orm
    .select({ threadId: messages.threadId })
    .from(messages)
    .where(and(eq(messages.grantId, grantId), eq(messages.id, messageId)))
    .limit(1);
  return row?.threadId;
}

/**
 * The message a send answers, as the send gate reads it: its thread and its `automated` verdict (null: a person
 * wrote it), in one read, so the runaway guard does not read the row again; undefined when it is not the grant's.
 */
export async function repliedMessage(
  db: Database,
  grantId: string,
  messageId: string,
): Promise<{ threadId: string; automated: StoredMessageVerdict['automated'] | null } | undefined> {
  const [row] = await db.orm
    .select({
      threadId: messages.threadId,
      automated: sql<string | null>`json_extract(${messages.verdict}, '$.automated')`,
    })
    .from(messages)
    .where(and(eq(messages.grantId, grantId), eq(messages.id, messageId)))
    .limit(1);
  if (!row) return undefined;
  const automated = row.automated ? (JSON.parse(row.automated) as StoredMessageVerdict['automated']) : null;
  return { threadId: row.threadId, automated: automated ?? null };
}

/** A flagged read, as the gate keeps it. */
export interface UntrustedRead {
  reader: string;
  messageId: string;
  applicationId: string;
  grantId: string;
  threadId: string | null;
  reasons: string[];
  at: number;
}

/** Records flagged reads (a message read again moves its time). */
export async function recordUntrustedReads(db: Database, reads: readonly UntrustedRead[]): Promise<void> {
  if (reads.length === 0) return;
  await db.write((tx) =>
    tx
      .insert(untrustedReads)
      .values(reads.map((read) => ({ ...read })))
      .onConflictDoUpdate({
        target: [untrustedReads.reader, untrustedReads.messageId],
        set: { at: sql`excluded.at`, reasons: sql`excluded.reasons` },
      }),
  );
}

/** The flagged reads of any of `readers` on a grant since `sinceMs`, newest first. */
export async function untrustedReadsSince(
  db: Database,
  readers: readonly string[],
  grantId: string,
  sinceMs: number,
): Promise<UntrustedRead[]> {
  if (readers.length === 0) return [];
  return db.orm
    .select()
    .from(untrustedReads)
    .where(
      and(
        inArray(untrustedReads.reader, [...readers]),
        eq(untrustedReads.grantId, grantId),
        gte(untrustedReads.at, sinceMs),
      ),
    )
    .orderBy(sql`${untrustedReads.at} DESC`)
    .limit(50);
}
