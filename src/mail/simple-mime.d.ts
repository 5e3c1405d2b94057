/** Types of simple-mime.js (plain JavaScript, shared with worker threads). */

/** Largest message the fast path reads, in bytes. */
export declare const MAX_MESSAGE: number;

/**
 * The fields of mailparser's `simpleParser` result that normalize() reads, for a single-part text message; undefined
 * when the message is not one the fast path reads exactly as mailparser does.
 */
export declare function parseSimpleMessage(raw: Buffer): Record<string, unknown> | undefined;
