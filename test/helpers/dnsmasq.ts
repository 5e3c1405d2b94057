/**
 * Debian's dnsmasq as a real DNS server on loopback, for tests that need the service's own resolver path
 * (`AGENTPOST_DNS_SERVERS`): it serves the TXT, MX and address records a test gives, answers NXDOMAIN for other names
 * of its local zones, REFUSED for names outside them (it has no upstream), and forwards chosen zones to a given
 * server ({@link startServfailServer} makes it answer SERVFAIL). It runs in the foreground with no configuration file, no upstream resolvers and no hosts file, on a fixed
 * port of the test's range (dnsmasq cannot pick one and say which). Records change by {@link Dnsmasq.restart}.
 * Needs the `dnsmasq-base` package and root; tests skip with a clear message otherwise ({@link dnsmasqMissing}).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { createSocket } from 'node:dgram';

const DNSMASQ = '/usr/sbin/dnsmasq';

/** Why dnsmasq cannot run here, or undefined when it can. */
export function dnsmasqMissing(): string | undefined {
  if (!existsSync(DNSMASQ)) return 'dnsmasq is not installed (apt-get install dnsmasq-base; .ci/run installs it)';
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'dnsmasq tests need root (it binds its port as root, --user=root)';
  return undefined;
}

/** The records dnsmasq serves. */
export interface DnsmasqRecords {
  /** TXT records, one string each (a comma would split it into several strings). */
  txt?: [name: string, value: string][];
  /** MX records. */
  mx?: [name: string, exchange: string, preference: number][];
  /** A / AAAA records. */
  hosts?: [name: string, address: string][];
  /** Zones dnsmasq answers for alone: a name in them without a record is NXDOMAIN (never forwarded). */
  localZones?: string[];
  /** Zones forwarded to `address#port` (e.g. a {@link startServfailServer}). Names in no zone of these are REFUSED (no upstream). */
  forward?: [zone: string, server: string][];
}

/** A running dnsmasq. */
export interface Dnsmasq {
  /** `127.0.0.1:<port>`, as AGENTPOST_DNS_SERVERS takes it. */
  server: string;
  /** Restarts it with other records (on the same port). */
  restart(records: DnsmasqRecords): Promise<void>;
  stop(): Promise<void>;
}

/** The name every instance answers, to know it is up. */
const READY_NAME = 'dnsmasq-ready.invalid';

function argumentsFor(port: number, records: DnsmasqRecords): string[] {
  const args = [
    '--keep-in-foreground',
    '--conf-file=/dev/null',
    '--no-resolv',
    '--no-hosts',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--user=root',
    '--pid-file=',
    '--log-facility=-',
  ];
  args.push(`--txt-record=${READY_NAME},ok`);
  for (const zone of records.localZones ?? []) args.push(`--local=/${zone}/`);
  for (const [zone, server] of records.forward ?? []) args.push(`--server=/${zone}/${server}`);
  // No shell between: the value goes as it is (quotes would be part of it).
  for (const [name, value] of records.txt ?? []) args.push(`--txt-record=${name},${value}`);
  for (const [name, exchange, preference] of records.mx ?? []) args.push(`--mx-host=${name},${exchange},${preference}`);
  for (const [name, address] of records.hosts ?? []) args.push(`--host-record=${name},${address}`);
  return args;
}

/** Starts dnsmasq on 127.0.0.1:`port` with `records`; resolves once it answers. */
export async function startDnsmasq(port: number, records: DnsmasqRecords): Promise<Dnsmasq> {
  let child: ChildProcess | undefined;
  let output = '';

  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((done) => running.once('exit', () => done()));
    running.kill('SIGTERM');
    await exited;
  }

  async function start(current: DnsmasqRecords): Promise<void> {
    output = '';
    const started = spawn(DNSMASQ, argumentsFor(port, current), { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const resolver = new Resolver({ timeout: 200, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    for (let attempt = 0; attempt < 50; attempt++) {
      if (started.exitCode !== null) throw new Error(`dnsmasq exited with ${started.exitCode}:\n${output}`);
      try {
        await resolver.resolveTxt(READY_NAME);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await stop();
    throw new Error(`dnsmasq did not answer on port ${port}:\n${output}`);
  }

  await start(records);
  return {
    server: `127.0.0.1:${port}`,
    async restart(next) {
      await stop();
      await start(next);
    },
    stop,
  };
}

/**
 * A DNS server that answers every query SERVFAIL (RCODE 2), the question echoed: what a broken authoritative server
 * gives. dnsmasq forwards a zone to it (`forward: [[zone, '127.0.0.1#<port>']]`) and passes the SERVFAIL on.
 */
export async function startServfailServer(port: number): Promise<{ close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    const answer = Buffer.from(query);
    // QR=1, opcode and RD kept; RA=1, RCODE=2; no answers, authority or additional records (the question stays).
    answer[2] = 0x80 | (query[2]! & 0x79);
    answer[3] = 0x80 | 0x02;
    answer.writeUInt16BE(0, 6);
    answer.writeUInt16BE(0, 8);
    answer.writeUInt16BE(0, 10);
    // Cut any additional (EDNS) record off: the question ends at the first zero label plus type and class.
    let at = 12;
    while (at < answer.length && answer[at] !== 0) at += answer[at]! + 1;
    socket.send(answer.subarray(0, Math.min(answer.length, at + 5)), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve));
  return { close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
