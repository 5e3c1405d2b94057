/**
 * @module storage/engine/mail-prepare-worker
 * Runs in a worker thread beside the mail writer thread (see mail-writer.ts, started by worker-module.ts): prepares
 * raw messages with the caller's prepare module (parse and rows, `MailPrepare`) and hands each item straight to the
 * writer thread over a port of their own, so the writer thread spends its time on SQL alone and the two run side by
 * side. A message the module declines (or throws on) is answered to the main thread as declined, and the caller
 * prepares it elsewhere.
 *
 * Messages from the main thread: `{ port }` first (the writer thread's end of their channel), then `{ entries }` (raw
 * messages with their ids). To the writer: `{ entries }` of prepared items, each with its id,
 * its summary and whether it must be durable. To the main thread: `{ results }` for declined messages, and
 * `{ ready: true }` once loaded.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { MailPrepare, MailWriteItem } from './mail-writer.js';

/**
 * A raw message as the main thread sends it (`Entry` of kind raw in mail-writer-state.ts, with its id), or a group of them
 * (kind raws), whose messages are answered with the group's id and their index (`sub`).
 */
type RawEntry = { id: number; durable?: false } & (
  { kind: 'raw'; raw: Uint8Array; meta: unknown } | { kind: 'raws'; raws: Uint8Array[]; metas: unknown[] }
);

/** A prepared message as the writer thread receives it. */
interface PreparedEntry {
  id: number;
  sub?: number;
  kind: 'item';
  item: MailWriteItem;
  summary?: unknown;
  durable?: false;
}

const { prepareModule } = workerData as { prepareModule: string };
const prepare = ((await import(prepareModule)) as { prepare: MailPrepare }).prepare;

/** The writer thread's end of their channel: the first message from the main thread (messages keep their order). */
let writer: MessagePort | undefined;

/** Hands prepared items to the writer, moving (not copying) the raw bytes they carry. */
function hand(entries: PreparedEntry[]): void {
  if (entries.length === 0) return;
  const transfer = new Set<ArrayBuffer>();
  for (const entry of entries)
    for (const copy of entry.item.copies)
      if (copy.raw && copy.raw.buffer instanceof ArrayBuffer) transfer.add(copy.raw.buffer);
  writer!.postMessage({ entries }, [...transfer]);
}

/** Items of one message from the main thread are handed over this many at a time (the writer takes them as they come). */
const HAND_OVER = 16;

parentPort?.on('message', (message: { port?: MessagePort; entries?: RawEntry[] }) => {
  if (message.port) writer = message.port;
  if (!message.entries) return;
  const declined: { id: number; sub?: number; ok: false; declined: true; raw?: Uint8Array }[] = [];
  let ready: PreparedEntry[] = [];
  /** Prepares one message; false when declined. */
  const one = (
    raw: Uint8Array,
    meta: unknown,
    id: number,
    sub: number | undefined,
    durable: false | undefined,
  ): boolean => {
    let prepared: ReturnType<MailPrepare>;
    try {
      prepared = prepare(raw, meta);
    } catch {
      prepared = undefined;
    }
    const at = sub === undefined ? {} : { sub };
    if (!prepared) {
      // A group's bytes were moved here: they go back with the answer, for the caller to parse.
      declined.push({ id, ...at, ok: false, declined: true, ...(sub === undefined ? {} : { raw }) });
      return false;
    }
    // A group's messages go without their summary: its caller asks only whether each was stored.
    const summary = prepared.summary !== undefined && sub === undefined ? { summary: prepared.summary } : {};
    ready.push({
      id,
      ...at,
      kind: 'item',
      item: prepared.item,
      ...summary,
      ...(durable === false ? { durable: false as const } : {}),
    });
    return true;
  };
  // Each raw buffer is referenced by at most one item, whose copy keeps its bytes (ingest-prepare.ts), or by a
  // declined message: moving it is safe.
  for (const entry of message.entries) {
    if (entry.kind === 'raws') {
      entry.raws.forEach((raw, sub) => one(raw, entry.metas[sub], entry.id, sub, false));
    } else one(entry.raw, entry.meta, entry.id, undefined, entry.durable);
    if (ready.length >= HAND_OVER) {
      hand(ready);
      ready = [];
    }
  }
  hand(ready);
  if (declined.length > 0)
    parentPort?.postMessage({ results: declined }, [
      ...new Set(declined.flatMap((result) => (result.raw?.buffer instanceof ArrayBuffer ? [result.raw.buffer] : []))),
    ]);
});
// Loaded (the prepare module and what it imports).
parentPort?.postMessage({ ready: true });
