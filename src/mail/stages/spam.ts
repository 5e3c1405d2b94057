/**
 * @module mail/stages/spam
 * Inbound stage 3: the spam score of a received message, from the checks a policy's `spam_detection` turns on:
 * - header anomalies (`use_header_anomaly_detection`; ./header-anomalies.ts);
 * - DNSBL look-ups of the client's IP through the injected resolver (`use_list_dnsbl`; zones from
 *   `AGENTPOST_DNSBL_ZONES`), {@link DNSBL_SCORE} points a listing;
 * - rspamd's score (its HTTP `checkv2` API) whenever `AGENTPOST_RSPAMD_URL` is set.
 * The points add up; the message is spam when they reach the threshold, `BASE_THRESHOLD / spam_sensitivity`
 * (6 at the default sensitivity 1, the score at which rspamd's default configuration marks mail as spam), or when
 * rspamd's own action is `reject` (GTUBE, a virus, a certain spam signature), whatever the sensitivity.
 *
 * An rspamd that does not answer in time, or answers with an error, rejects the check: the pipeline fails closed
 * (451 4.3.0, the sender retries). A DNSBL that fails counts as not listed: lists come and go, mail must not wait on them.
 */
import type { Clock, DnsResolver, Logger, SpamChecker, SpamVerdict, StageMail } from '../../ports/index.js';
import { addressBytes, isPublicAddress } from '../../webhooks/index.js';
import { readRawHeaders } from '../../mime/index.js';
import { dnsQuery, type DnsQuery } from './dns-query.js';
import { headerAnomalies } from './header-anomalies.js';

/** The threshold at `spam_sensitivity` 1: rspamd's default `add_header` score (its "this is spam" line). */
export const BASE_THRESHOLD = 6;

/** Sensitivity bounds of the specification (`spam_sensitivity` 0.1 to 5.0, default 1). */
const MIN_SENSITIVITY = 0.1;
const MAX_SENSITIVITY = 5;

/** Points of one DNSBL listing: the client is a known spam source, so one listing alone is spam at sensitivity 1. */
export const DNSBL_SCORE = 6;

/** rspamd symbols named in the reasons, highest scores first. */
const MAX_RSPAMD_REASONS = 10;

/** What {@link createSpamChecker} needs. */
export interface SpamCheckerOptions {
  dns: DnsResolver;
  clock: Clock;
  logger: Logger;
  /** DNSBL zones asked about the client's IP when a policy turns `use_list_dnsbl` on. */
  dnsblZones: string[];
  /** rspamd's normal worker (`http://127.0.0.1:11333`); unset, no rspamd score. */
  rspamdUrl: string | undefined;
  /** Deadline of one rspamd check, in ms. */
  rspamdTimeoutMs: number;
}

/** The threshold a `spam_sensitivity` gives: higher sensitivity, lower threshold (two decimals). */
export function spamThreshold(sensitivity: number | undefined): number {
  const value = Math.min(MAX_SENSITIVITY, Math.max(MIN_SENSITIVITY, sensitivity ?? 1));
  return Math.round((BASE_THRESHOLD / value) * 100) / 100;
}

/**
 * The DNSBL query name of an IP in a zone: IPv4 octets reversed (`7.113.0.203.zen.spamhaus.org`), IPv6 nibbles
 * reversed (RFC 5782); an IPv4-mapped IPv6 address is asked as its IPv4 address. Undefined for anything else.
 */
export function dnsblName(address: string, zone: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const bytes = addressBytes(mapped ? mapped[1]! : address);
  if (!bytes) return undefined;
  if (bytes.length === 4) return `${[...bytes].reverse().join('.')}.${zone}`;
  const nibbles = bytes.flatMap((byte) => [byte >> 4, byte & 15].map((nibble) => nibble.toString(16)));
  return `${nibbles.reverse().join('.')}.${zone}`;
}

/**
 * Whether a DNSBL answer means "listed": an address in 127.0.0.0/8 (RFC 5782), except 127.255.255.0/24, which
 * Spamhaus uses for "query refused" (public resolver, no access) rather than a listing.
 */
function isListing(answer: unknown): answer is string {
  return typeof answer === 'string' && /^127\.\d+\.\d+\.\d+$/.test(answer) && !answer.startsWith('127.255.255.');
}

/** rspamd's `checkv2` answer, the fields used. */
interface RspamdResult {
  score?: number;
  required_score?: number;
  action?: string;
  symbols?: Record<string, { name?: string; score?: number }>;
  messages?: { smtp_message?: string };
  error?: string;
}

/** Builds the {@link SpamChecker} of the inbound pipeline. */
export function createSpamChecker(options: SpamCheckerOptions): SpamChecker {
  const query = dnsQuery(options.dns);

  /** The zones that list `address`, with their answer. */
  async function dnsblListings(address: string): Promise<{ zone: string; answer: string }[]> {
    if (!isPublicAddress(address)) return [];
    const found = await Promise.all(options.dnsblZones.map((zone) => listing(query, address, zone, options.logger)));
    return found.filter((entry) => entry !== undefined);
  }

  /** rspamd's verdict on the message; rejects when rspamd cannot give one. */
  async function rspamd(url: string, mail: StageMail): Promise<RspamdResult> {
    const headers: [string, string][] = [['From', singleLine(mail.mailFrom)]];
    if (mail.client) headers.push(['IP', mail.client.address], ['Helo', singleLine(mail.client.helo)]);
    for (const recipient of mail.recipients ?? []) headers.push(['Rcpt', singleLine(recipient)]);
    let response: Response;
    try {
      response = await fetch(`${url}/checkv2`, {
        method: 'POST',
        headers,
        body: mail.raw,
        signal: AbortSignal.timeout(options.rspamdTimeoutMs),
      });
    } catch (error) {
      throw new Error(`rspamd at ${url} did not answer: ${(error as Error).message}`, { cause: error });
    }
    const text = await response.text();
    let result: RspamdResult;
    try {
      result = JSON.parse(text) as RspamdResult;
    } catch {
      throw new Error(`rspamd at ${url} answered ${response.status} without JSON: ${text.slice(0, 200)}`);
    }
    if (!response.ok || result.error !== undefined || typeof result.score !== 'number') {
      throw new Error(`rspamd at ${url} answered ${response.status}: ${result.error ?? text.slice(0, 200)}`);
    }
    return result;
  }

  return async function checkSpam(mail, settings): Promise<SpamVerdict> {
    const threshold = spamThreshold(settings.spam_sensitivity);
    const reasons: string[] = [];
    let score = 0;
    let forced = false;

    // rspamd first: when it is down the check fails at once, before any other look-up.
    if (options.rspamdUrl) {
      const result = await rspamd(options.rspamdUrl, mail);
      score += result.score!;
      const rejected = result.action === 'reject';
      // Symbols that scored; a rejection (GTUBE, a virus) is often a symbol of no score: then all of them.
      const symbols = Object.entries(result.symbols ?? {})
        .map(([name, symbol]) => ({ name: symbol.name ?? name, score: symbol.score ?? 0 }))
        .filter((symbol) => rejected || symbol.score !== 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, MAX_RSPAMD_REASONS);
      reasons.push(
        `rspamd: ${round(result.score!)} (${result.action ?? 'no action'})`,
        ...symbols.map((symbol) => `rspamd ${symbol.name} ${signed(symbol.score)}`),
      );
      if (rejected) {
        forced = true;
        reasons.push(
          `rspamd rejects${result.messages?.smtp_message ? `: ${singleLine(result.messages.smtp_message)}` : ''}`,
        );
      }
    }

    if (settings.use_header_anomaly_detection) {
      for (const anomaly of headerAnomalies(readRawHeaders(mail.raw), options.clock.now())) {
        score += anomaly.score;
        reasons.push(`header ${anomaly.name} ${signed(anomaly.score)}`);
      }
    }

    if (settings.use_list_dnsbl && mail.client) {
      for (const { zone, answer } of await dnsblListings(mail.client.address)) {
        score += DNSBL_SCORE;
        reasons.push(`dnsbl ${zone} lists ${mail.client.address} (${answer}) ${signed(DNSBL_SCORE)}`);
      }
    }

    score = round(score);
    return { spam: forced || score >= threshold, score, threshold, reasons };
  };
}

/** One zone's answer about `address`: the listing, or undefined when not listed or the look-up failed. */
async function listing(
  query: DnsQuery,
  address: string,
  zone: string,
  logger: Logger,
): Promise<{ zone: string; answer: string } | undefined> {
  const name = dnsblName(address, zone);
  if (!name) return undefined;
  try {
    const answer = (await query(name, 'A')).find(isListing);
    return answer === undefined ? undefined : { zone, answer };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOTFOUND' && code !== 'ENODATA')
      logger.warn('DNSBL look-up failed; counted as not listed', { zone, name, error: (error as Error).message });
    return undefined;
  }
}

/** A header value on one line (no CR/LF to inject further headers). */
function singleLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').trim();
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${round(value)}`;
}
