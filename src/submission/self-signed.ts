/**
 * @module submission/self-signed
 * A self-signed X.509 certificate for a development start of the submission listener (no certificate files set):
 * an ECDSA P-256 key and a certificate written out in DER by hand, signed with node:crypto. Nothing else of
 * X.509 is needed, so no library: a version 3 certificate with the host names and addresses as subjectAltName.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { isIP } from 'node:net';

/** A certificate and its private key, PEM. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** A DER element: tag, length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length = body.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), body]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), body]);
}

const sequence = (...items: Buffer[]) => der(0x30, ...items);

/** An object identifier such as `1.2.840.10045.4.3.2`. */
function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      groups.unshift(0x80 | (value & 0x7f));
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050
    ? der(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii'))
    : der(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}

/** A name of one common name. */
const commonName = (name: string) =>
  sequence(der(0x31, sequence(oid('2.5.4.3'), der(0x0c, Buffer.from(name.slice(0, 64), 'utf8')))));

/** A subjectAltName entry: `dNSName` [2], or `iPAddress` [7] with the address bytes. */
function altName(name: string): Buffer {
  const version = isIP(name);
  if (version === 4) return der(0x87, Buffer.from(name.split('.').map(Number)));
  if (version === 6) {
    const [head = '', tail = ''] = name.split('::');
    const left = head ? head.split(':') : [];
    const right = tail ? tail.split(':') : [];
    const groups = name.includes('::')
      ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
      : left;
    return der(0x87, Buffer.from(groups.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff])));
  }
  return der(0x82, Buffer.from(name, 'ascii'));
}

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/**
 * Makes a self-signed certificate for `names` (host names and IP addresses; the first is the common name), valid
 * from `now` (less a day, for clocks behind) for `days`. `random` gives the serial number's bytes.
 */
export function selfSignedCertificate(
  names: readonly string[],
  now: Date,
  random: (size: number) => Buffer,
  days = 825,
): CertificatePair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = random(16);
  // A positive INTEGER of no leading zero byte.
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const name = commonName(names[0] ?? 'localhost');
  const extensions = der(
    0xa3,
    sequence(
      sequence(oid('2.5.29.17'), der(0x04, sequence(...names.map(altName)))),
      // basicConstraints: not a certificate authority.
      sequence(oid('2.5.29.19'), der(0x04, sequence())),
      // keyUsage (critical): digitalSignature.
      sequence(oid('2.5.29.15'), der(0x01, Buffer.from([0xff])), der(0x04, der(0x03, Buffer.from([0x07, 0x80])))),
      // extKeyUsage: serverAuth.
      sequence(oid('2.5.29.37'), der(0x04, sequence(oid('1.3.6.1.5.5.7.3.1')))),
    ),
  );
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    algorithm,
    name,
    sequence(time(new Date(now.getTime() - 86_400_000)), time(new Date(now.getTime() + days * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, algorithm, der(0x03, Buffer.from([0]), signature));
  const lines = certificate.toString('base64').match(/.{1,64}/g) ?? [];
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}
