/**
 * @module mail/stages/header-anomalies
 * Header anomaly checks of the spam stage (a policy's `use_header_anomaly_detection`): a pure function of the
 * message's header lines and the time it arrived. Each anomaly adds points to the spam score; the weights follow
 * rspamd's symbols for the same defects, so the scores of both add up on one scale.
 */
import type { RawHeader } from '../../mime/index.js';

/** One defect found, with the points it adds to the spam score. */
export interface HeaderAnomaly {
  name: string;
  score: number;
}

/** Points per anomaly (rspamd: MISSING_DATE 1.0, MISSING_MID 2.5, MISSING_FROM 2.0, DATE_IN_FUTURE 4.0, SUBJ_ALL_CAPS 3.0). */
export const ANOMALY_SCORES = {
  MISSING_DATE: 1,
  INVALID_DATE: 1.5,
  DATE_IN_FUTURE: 3,
  MISSING_MESSAGE_ID: 1.5,
  MISSING_FROM: 3,
  INVALID_FROM: 3,
  MULTIPLE_FROM: 2,
  TOO_MANY_RECEIVED: 2,
  SUBJECT_ALL_CAPS: 1.5,
} as const;

/** Clocks drift and queues hold mail, but a Date more than a day ahead is forged or broken. */
const FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;

/**
 * More Received lines than this is a mail loop or a forged trail: Postfix bounces at 50 hops (`hopcount_limit`);
 * legitimate mail rarely crosses more than a dozen.
 */
const MAX_RECEIVED = 30;

/** A Subject shorter than this many letters (an acronym, `RE: OK`) is not "shouting". */
const MIN_CAPS_LETTERS = 10;

/** An address in a From field: `local@domain` (a display name and angle brackets around it are fine). */
const ADDRESS =
  /(?:^|[\s<:,])[^\s<>@",;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?(?:>|$|[\s,;])/;

/** RFC 2047 encoded words are not looked into (their case says nothing without decoding). */
const ENCODED_WORD = /=\?[^?]+\?[bqBQ]\?[^?]*\?=/g;

/** The anomalies of a message's header, given the time it arrived. */
export function headerAnomalies(headers: RawHeader[], receivedAt: Date): HeaderAnomaly[] {
  const values = (name: string) =>
    headers.filter((header) => header.name.toLowerCase() === name).map((header) => header.value);
  const found: (keyof typeof ANOMALY_SCORES)[] = [];

  const [date] = values('date');
  if (date === undefined) found.push('MISSING_DATE');
  else {
    const time = Date.parse(date.replace(/\([^)]*\)/g, ' ').trim());
    if (Number.isNaN(time)) found.push('INVALID_DATE');
    else if (time - receivedAt.getTime() > FUTURE_TOLERANCE_MS) found.push('DATE_IN_FUTURE');
  }

  if (!values('message-id').some((value) => value.trim() !== '')) found.push('MISSING_MESSAGE_ID');

  const from = values('from');
  if (from.length === 0) found.push('MISSING_FROM');
  else {
    if (from.length > 1) found.push('MULTIPLE_FROM');
    if (!ADDRESS.test(from[0]!.trim())) found.push('INVALID_FROM');
  }

  if (values('received').length > MAX_RECEIVED) found.push('TOO_MANY_RECEIVED');

  const [subject] = values('subject');
  if (subject !== undefined) {
    const letters = subject.replace(ENCODED_WORD, '').replace(/[^\p{L}]/gu, '');
    if (letters.length >= MIN_CAPS_LETTERS && letters === letters.toUpperCase() && letters !== letters.toLowerCase())
      found.push('SUBJECT_ALL_CAPS');
  }

  return found.map((name) => ({ name, score: ANOMALY_SCORES[name] }));
}
