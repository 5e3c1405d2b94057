/**
 * A real rspamd (Debian's package) for tests: started in the foreground on loopback with a minimal configuration in
 * a temporary directory (one normal worker, no controller, no redis; its database, logs and caches in that
 * directory), waited for, and stopped. DNS goes to a closed port on loopback, so every network check of rspamd
 * fails at once instead of waiting on the internet: the scores come from the message alone.
 *
 * Where rspamd is missing, tests that need it skip with a message; under CI (CI=true) they fail instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './service.js';

/** This helper's fixed ports (rspamd cannot bind port 0 and tell which it got). */
const PORT_RANGE = { first: 43400, last: 43599 };

/** The rspamd binary on PATH, or undefined. */
export const RSPAMD_BINARY: string | undefined = (() => {
  const found = spawnSync('sh', ['-c', 'command -v rspamd'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? path : undefined;
})();

/** True when tests that need rspamd should skip: it is missing and this is not CI (where it must be installed). */
export const SKIP_RSPAMD = RSPAMD_BINARY === undefined && process.env.CI !== 'true';
if (SKIP_RSPAMD)
  console.warn(
    'rspamd is not installed: the tests that need it are skipped (apt-get install rspamd; .ci/run installs it)',
  );

/** A running rspamd. */
export interface RunningRspamd {
  /** Base URL of the normal worker (POST /checkv2). */
  url: string;
  /** Where rspamd logs, for a failing test's message. */
  logFile: string;
  close(): Promise<void>;
}

/** Whether nothing listens on `port` on loopback right now. */
async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port of this helper's range, tried from a random place in it. */
async function pickPort(): Promise<number> {
  const size = PORT_RANGE.last - PORT_RANGE.first + 1;
  const start = Math.floor(Math.random() * size);
  for (let index = 0; index < size; index++) {
    const port = PORT_RANGE.first + ((start + index) % size);
    if (await portFree(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.first}-${PORT_RANGE.last} for rspamd`);
}

/** The configuration: Debian's common rules and options, one normal worker on `port`, everything else local. */
function configuration(dir: string, port: number, dnsPort: number): string {
  mkdirSync(join(dir, 'local.d'), { recursive: true });
  // Modules that only ask the network (DNS-based host checks, the fuzzy hash servers) are off: with DNS
  // unanswered they would only add "could not resolve" points to every message.
  writeFileSync(join(dir, 'local.d', 'hfilter.conf'), 'enabled = false;\n');
  writeFileSync(join(dir, 'local.d', 'fuzzy_check.conf'), 'enabled = false;\n');
  return `.include "$CONFDIR/common.conf"
options {
  pidfile = "${dir}/rspamd.pid";
  .include "$CONFDIR/options.inc"
  tempdir = "${dir}";
  # Hyperscan would compile every regular expression at start (tens of seconds); PCRE needs no warm-up.
  disable_hyperscan = true;
  dns { nameserver = ["127.0.0.1:${dnsPort}"]; timeout = 0.2s; retransmits = 1; }
}
logging { type = "file"; filename = "${dir}/rspamd.log"; level = "notice"; }
worker "normal" {
  bind_socket = "127.0.0.1:${port}";
  .include "$CONFDIR/worker-normal.inc"
  count = 1;
}
`;
}

/** Starts rspamd and waits until it answers `/ping` (its rule set takes seconds to load). */
export async function startRspamd(options: { readyTimeoutMs?: number } = {}): Promise<RunningRspamd> {
  if (!RSPAMD_BINARY)
    throw new Error('rspamd is not installed (apt-get install rspamd); CI must install it (.ci/run APT_PACKAGES)');
  const dir = tempDir('agentpost-rspamd-');
  const port = await pickPort();
  // A port of the range nobody answers DNS on (rspamd's queries fail fast); rspamd never binds it.
  const dnsPort = port === PORT_RANGE.last ? PORT_RANGE.last - 1 : PORT_RANGE.last;
  const conf = join(dir.path, 'rspamd.conf');
  writeFileSync(conf, configuration(dir.path, port, dnsPort));
  const logFile = join(dir.path, 'rspamd.log');
  const vars = ['RUNDIR', 'DBDIR', 'LOGDIR'].map((name) => `--var=${name}=${dir.path}`);
  const asRoot = process.getuid?.() === 0 ? ['-u', 'root', '-g', 'root'] : [];
  const child: ChildProcess = spawn(
    RSPAMD_BINARY,
    ['-f', '-i', ...asRoot, '-c', conf, ...vars, `--var=LOCAL_CONFDIR=${dir.path}`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const stop = async () => {
    if (!exited && child.pid !== undefined) {
      // The main process and its workers are one process group (detached): end all of them.
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      const killed = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, 5_000);
      await exit;
      clearTimeout(killed);
    }
    dir.remove();
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (exited) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4000) : '';
      await stop();
      throw new Error(`rspamd exited at start:\n${stderr}\n${log}`);
    }
    try {
      const response = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok && (await response.text()).trim() === 'pong') break;
    } catch {
      // Not listening yet: ask again.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`rspamd did not answer on ${url} in time:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, logFile, close: stop };
}
