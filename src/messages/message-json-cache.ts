/**
 * @module messages/message-json-cache
 * The wire JSON of messages (`JSON.stringify` of the wire object without `delivery_status`), kept by message id and
 * revision so that a list of messages is answered by joining strings instead of loading, mapping and serialising each
 * message again (issue 21: on a list of 50 messages of 10 KB, JSON and body loads were most of a request).
 *
 * An entry is valid for one revision of its message: `messages.rev`, which triggers of the database raise on every
 * update of the row and every change of its attachments, whichever connection or process writes (migration 0010).
 * A read that finds another revision drops the entry, so a changed message is never served from here. Bodies kept
 * in blobs are content-addressed and never change under a row. Kept as UTF-8 bytes, so that a list is one copy of
 * them into the response, not a string to join and encode again. Bounded by bytes; an entry read since the last
 * eviction pass gets a second chance (CLOCK), so a read does not reorder the map.
 */

/** What the cache holds of one message. */
interface Entry {
  rev: number;
  json: Buffer;
  bytes: number;
  /** Read since eviction last passed it. */
  used: boolean;
}

/** A bounded map of message id → wire JSON at one revision. */
export interface MessageJsonCache {
  /** The JSON kept for `id` at revision `rev`, or undefined (an entry of another revision is dropped). */
  get(id: string, rev: number): Buffer | undefined;
  /** Keeps `json` (UTF-8) as the wire form of `id` at revision `rev`. */
  set(id: string, rev: number, json: Buffer): void;
  /** Entries and their bytes now. */
  size(): { entries: number; bytes: number };
}

/** The memory an entry takes, about: its bytes, its id (two bytes a character at most) and the objects around them. */
const bytesOf = (id: string, json: Buffer) => json.length + 2 * id.length + 128;

/** Creates a cache of at most `maxBytes` (0: keeps nothing). */
export function createMessageJsonCache(maxBytes: number): MessageJsonCache {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const drop = (id: string, entry: Entry) => {
    entries.delete(id);
    bytes -= entry.bytes;
  };
  return {
    get(id, rev) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      if (entry.rev !== rev) {
        drop(id, entry);
        return undefined;
      }
      entry.used = true;
      return entry.json;
    },
    set(id, rev, json) {
      const size = bytesOf(id, json);
      const old = entries.get(id);
      if (old) drop(id, old);
      if (size > maxBytes / 8) return;
      while (bytes + size > maxBytes) {
        const [oldestId, oldest] = entries.entries().next().value as [string, Entry];
        entries.delete(oldestId);
        // Read since it was last passed: a second chance, at the young end.
        if (oldest.used) {
          oldest.used = false;
          entries.set(oldestId, oldest);
        } else bytes -= oldest.bytes;
      }
      entries.set(id, { rev, json, bytes: size, used: false });
      bytes += size;
    },
    size: () => ({ entries: entries.size, bytes }),
  };
}
