/**
 * The trust corpus (test/fixtures/agent/trust): each .eml read with mailparser into the {@link TrustInput} the
 * wiring will build from a stored message, with the mailbox context of cases.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import type { TrustInput } from '../../../src/trust/index.js';

export const CORPUS = join(import.meta.dirname, '../../fixtures/agent/trust');

interface Expectation {
  spf: string;
  dkim: string;
  dmarc: string;
  display_name_spoof: false | string;
  lookalike_domain: false | string;
  forged_thread: false | string;
  link_mismatch: number;
  reasons?: string[];
}

export interface Case {
  file: string;
  kind: 'benign' | 'injection' | 'phishing';
  hidden_text?: string;
  expect: Expectation;
}

interface Manifest {
  mailbox: { email: string; organisation: string };
  trusted_authserv_ids: string[];
  known_contacts: { email: string; name: string }[];
  known_message_ids: string[];
  cases: Record<string, Omit<Case, 'file'>>;
}

export const manifest = JSON.parse(readFileSync(join(CORPUS, 'cases.json'), 'utf8')) as Manifest;

export const cases: Case[] = Object.entries(manifest.cases).map(([file, entry]) => ({ file, ...entry }));

/** The first address of a mailparser address field. */
function addresses(field: AddressObject | AddressObject[] | undefined): { email: string; name?: string }[] {
  const list = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return list.flatMap((object) =>
    object.value.map((entry) => ({ email: entry.address ?? '', ...(entry.name ? { name: entry.name } : {}) })),
  );
}

/** The value of a header line (`Name: value`, folds kept). */
function valueOf(line: string): string {
  return line.slice(line.indexOf(':') + 1);
}

const knownIds = new Set(manifest.known_message_ids.map((id) => id.toLowerCase()));

/** The trust input of one corpus message. */
export async function inputOf(item: Case): Promise<TrustInput> {
  const raw = readFileSync(join(CORPUS, item.file));
  const mail = await simpleParser(raw);
  const references =
    mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : [mail.references];
  const hidden = item.hidden_text ?? '';
  return {
    authentication: {
      headers: mail.headerLines
        .filter((line) => line.key === 'authentication-results')
        .map((line) => valueOf(line.line)),
      trustedAuthservIds: manifest.trusted_authserv_ids,
    },
    from: addresses(mail.from)[0],
    replyTo: addresses(mail.replyTo),
    subject: mail.subject ?? '',
    inReplyTo: mail.inReplyTo ?? null,
    references,
    knownMessageId: (id) => knownIds.has(id),
    mailbox: manifest.mailbox,
    knownContacts: manifest.known_contacts,
    text: mail.text ?? '',
    ...(typeof mail.html === 'string' ? { html: mail.html } : {}),
    hiddenText: hidden,
    hiddenTextRemoved: hidden.length,
  };
}
