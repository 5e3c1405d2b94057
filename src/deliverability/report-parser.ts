/**
 * @module deliverability/report-parser
 * What a message that reached a return path is (pure): a complaint (ARF, ./arf-parser.ts), a bounce or delay
 * warning (RFC 3464 or an MTA's text, ./dsn-parser.ts), or nothing the intake records (an auto-reply, a person
 * writing back, noise). Reading is bounded (./report-mime.ts) and never throws.
 */
import { parseComplaint, type ParsedComplaint } from './arf-parser.js';
import { parseBounce, type ParsedBounce } from './dsn-parser.js';
import { readReport } from '../mime/index.js';

/** A report as read. */
export type ParsedReport = ParsedBounce | ParsedComplaint | { kind: 'none' };

/** Reads a raw message that arrived at a return path. */
export function parseReport(raw: Buffer): ParsedReport {
  try {
    const report = readReport(raw);
    return parseComplaint(report) ?? parseBounce(report) ?? { kind: 'none' };
  } catch {
    // The readers are written not to throw; should one, the report is simply not understood.
    return { kind: 'none' };
  }
}

export type { ParsedBounce, BounceEntry } from './dsn-parser.js';
export type { ParsedComplaint } from './arf-parser.js';
