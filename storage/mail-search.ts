/**
 * @module storage/mail-search
 * The full-text index of messages: an SQLite FTS5 table (drizzle-kit cannot describe virtual tables, so it is
 * created here, idempotently, after the migrations). Its rowid is `messages.seq`; a trigger removes a message's
 * entry when the message row goes, whatever deleted it (a hard delete, or a grant's cascade).
 */
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Client } from '@libsql/client';
import type { Tx } from './orm.js';

/**
 * Contentless (the text is not stored twice; only the index) with deletes allowed, diacritics folded.
 * `unicode61` splits addresses at `@` and `.`, so a quoted address matches as a phrase.
 */
const CREATE_TABLE = `CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(subject, addresses, body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`;
const CREATE_DELETE_TRIGGER = `CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN DELETE FROM messages_fts WHERE rowid = old.seq; END`;

/** Creates the index and its trigger when missing. Fails with a clear message if FTS5 is not compiled in. */
export async function ensureMailSearchIndex(client: Client): Promise<void> {
  try {
    await client.execute(CREATE_TABLE);
  } catch (error) {
    throw new Error(
      `The database does not support SQLite FTS5 full-text search, which message search needs: ${String(error)}`,
      { cause: error },
    );
  }
  await client.execute(CREATE_DELETE_TRIGGER);
}

/** The text of a message that search covers. */
export interface SearchDocument {
  seq: number;
  subject: string;
  addresses: string;
  body: string;
}

/** Indexes messages (inside the transaction that stores them), many per statement. */
export async function indexMessageTexts(tx: Tx, documents: SearchDocument[]): Promise<void> {
  for (let index = 0; index < documents.length; index += 100) {
    const values = documents
      .slice(index, index + 100)
      .map((document) => sql`(${document.seq}, ${document.subject}, ${document.addresses}, ${document.body})`);
    await tx.run(sql`INSERT INTO messages_fts (rowid, subject, addresses, body) VALUES ${sql.join(values, sql`, `)}`);
  }
}

/** Columns a query may name (`subject:word`); `from:`/`to:` and friends search the addresses column. */
const COLUMN_ALIASES: Record<string, string> = {
  subject: 'subject',
  body: 'body',
  from: 'addresses',
  to: 'addresses',
  cc: 'addresses',
  bcc: 'addresses',
};

/**
 * Turns a user's query into a safe FTS5 expression: every word or "quoted phrase" becomes a quoted FTS5 string
 * (so operators and punctuation in it are literal), `word*` keeps its prefix star, `OR` between terms is kept,
 * `column:term` restricts a term to subject, body or addresses. Terms are ANDed. Returns undefined when the query
 * has no searchable term.
 */
export function toFtsQuery(query: string): string | undefined {
  const tokens = query.match(/(?:[A-Za-z_]+:)?"[^"]*"|\S+/g) ?? [];
  const parts: string[] = [];
  for (const token of tokens.slice(0, 32)) {
    if (token === 'OR' && parts.length > 0 && parts[parts.length - 1] !== 'OR') {
      parts.push('OR');
      continue;
    }
    let term = token;
    let column: string | undefined;
    const prefixed = /^([A-Za-z_]+):(.+)$/.exec(term);
    if (prefixed && COLUMN_ALIASES[prefixed[1]!.toLowerCase()]) {
      column = COLUMN_ALIASES[prefixed[1]!.toLowerCase()];
      term = prefixed[2]!;
    }
    let prefix = false;
    if (term.startsWith('"') && term.endsWith('"') && term.length >= 2) term = term.slice(1, -1);
    else if (term.endsWith('*')) {
      prefix = true;
      term = term.slice(0, -1);
    }
    // Keep only what the tokenizer would index; a term of punctuation only matches nothing and is dropped.
    if (!/[\p{L}\p{N}]/u.test(term)) continue;
    const quoted = `"${term.replace(/"/g, '""')}"${prefix ? '*' : ''}`;
    parts.push(column ? `${column} : ${quoted}` : quoted);
  }
  while (parts[parts.length - 1] === 'OR') parts.pop();
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** A condition on `messages` that keeps the rows whose text matches an FTS5 expression made by {@link toFtsQuery}. */
export function matchesSearch(seqColumn: SQLWrapper, ftsQuery: string): SQL {
  return sql`${seqColumn} IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ${ftsQuery})`;
}
