/**
 * @module submission/tls-source
 * The certificate of the submission listeners: the files of `AGENTPOST_TLS_CERT_FILE` and `AGENTPOST_TLS_KEY_FILE`,
 * read again when either changes (a renewal needs no restart), or, without them, a self-signed certificate made at
 * the first start and kept beside the database file (a development start; the log says so).
 */
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../ports/index.js';
import { selfSignedCertificate, type CertificatePair } from './self-signed.js';

/** File names of the self-signed certificate in the data directory. */
export const SELF_SIGNED_FILES = { cert: 'submission-tls.crt', key: 'submission-tls.key' } as const;

/** Where the listeners' certificate comes from, and its current pair. */
export interface TlsSource {
  /** The current certificate and key (PEM). */
  current(): CertificatePair;
  /**
   * Reads the files again when either changed since the last read (their size, time or inode), and answers the
   * pair's version (it grows by one with each pair taken). A pair that does not load (a half-written renewal, a key
   * of another certificate) is not taken: the one before stays, and the log says why.
   */
  refresh(): number;
  /** `files` (the settings) or `self-signed`. */
  kind: 'files' | 'self-signed';
}

/** Options of {@link openTlsSource}. */
export interface TlsSourceOptions {
  certFile: string | undefined;
  keyFile: string | undefined;
  /** Where a self-signed certificate is kept (beside the database file); undefined: in memory only. */
  dataDir: string | undefined;
  /** Names the self-signed certificate is made for (host names and addresses). */
  names: readonly string[];
  now: Date;
  random: (size: number) => Buffer;
  logger: Logger;
}

/** The files' identity: a change of any part means they were written again. */
const stamp = (path: string) => {
  const stats = statSync(path);
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
};

/** Reads and checks a pair; throws naming the settings when it does not load. */
function readPair(certFile: string, keyFile: string): CertificatePair {
  const pair = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  createSecureContext(pair);
  return pair;
}

/** Opens the certificate source; throws (naming the settings) when the files given cannot be read. */
export function openTlsSource(options: TlsSourceOptions): TlsSource {
  const { certFile, keyFile, logger } = options;
  if (certFile !== undefined && keyFile !== undefined) {
    let stamps = '';
    let version = 0;
    let pair: CertificatePair;
    try {
      stamps = `${stamp(certFile)}|${stamp(keyFile)}`;
      pair = readPair(certFile, keyFile);
    } catch (error) {
      throw new Error(
        `Cannot load the submission certificate (AGENTPOST_TLS_CERT_FILE ${certFile}, AGENTPOST_TLS_KEY_FILE ${keyFile}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    return {
      kind: 'files',
      current: () => pair,
      refresh() {
        let now: string;
        try {
          now = `${stamp(certFile)}|${stamp(keyFile)}`;
        } catch (error) {
          logger.warn('submission certificate files unreadable; keeping the one loaded', {
            error: (error as Error).message,
          });
          return version;
        }
        if (now === stamps) return version;
        try {
          pair = readPair(certFile, keyFile);
          stamps = now;
          logger.info('submission certificate reloaded', { cert_file: certFile });
          return ++version;
        } catch (error) {
          // Not remembered as read: the next connection tries again (the other file of a renewal may follow).
          logger.warn('submission certificate files changed but do not load; keeping the one loaded', {
            error: (error as Error).message,
          });
          return version;
        }
      },
    };
  }
  const pair = selfSigned(options);
  return { kind: 'self-signed', current: () => pair, refresh: () => 0 };
}

/** The self-signed pair kept in the data directory, made at the first start. */
function selfSigned({ dataDir, names, now, random, logger }: TlsSourceOptions): CertificatePair {
  const advice = 'set AGENTPOST_TLS_CERT_FILE and AGENTPOST_TLS_KEY_FILE for a certificate clients can verify';
  if (dataDir === undefined) {
    logger.warn(`submission uses a self-signed certificate made for this process only; ${advice}`);
    return selfSignedCertificate(names, now, random);
  }
  const certFile = join(dataDir, SELF_SIGNED_FILES.cert);
  const keyFile = join(dataDir, SELF_SIGNED_FILES.key);
  try {
    const pair = readPair(certFile, keyFile);
    logger.warn(`submission uses the self-signed certificate ${certFile}; ${advice}`);
    return pair;
  } catch {
    // None yet (or unreadable): make one.
  }
  const pair = selfSignedCertificate(names, now, random);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(keyFile, pair.key, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  writeFileSync(certFile, pair.cert);
  logger.warn(`submission made a self-signed certificate, ${certFile} (for ${names.join(', ')}); ${advice}`);
  return pair;
}
