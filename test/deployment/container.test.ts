/**
 * The container (issue 39), as far as it can be tested without Docker: the entrypoint script (default `serve`, options
 * to `serve`, `exec` so the service is the process that gets `docker stop`'s SIGTERM and shuts down gracefully), the
 * health check against a running service (HTTP role, SMTP role, nothing listening), and the compose files parsed as
 * YAML (js-yaml, already in node_modules through the dev tools) and checked against the Dockerfile and the settings.
 * Building the image and running the compose files need Docker: not run here.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import manifest from '../../package.json' with { type: 'json' };
import { SETTING_NAMES } from '../../src/index.js';
import { BIN, ROOT, childEnv, freePort } from '../helpers/process.js';
import { startTestService, tempDir, TEST_API_KEY } from '../helpers/service.js';

const run = promisify(execFile);
const ENTRYPOINT = join(ROOT, 'docker', 'entrypoint.sh');
const HEALTHCHECK = join(ROOT, 'docker', 'healthcheck.mjs');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

const dir = tempDir('agentpost-container-');
afterAll(() => dir.remove());

/** Runs the health check with `env`; its exit code and line. */
async function healthcheck(env: Record<string, string>): Promise<{ code: number; line: string }> {
  return run(process.execPath, [HEALTHCHECK], { env: childEnv(env) }).then(
    ({ stdout }) => ({ code: 0, line: stdout.trim() }),
    (error: { code: number; stdout: string }) => ({ code: error.code, line: error.stdout.trim() }),
  );
}

describe('the entrypoint script', () => {
  it('passes --version to the command', async () => {
    const { stdout } = await run('sh', [ENTRYPOINT, '--version'], { env: childEnv({ AGENTPOST_CLI: BIN }) });
    expect(stdout).toBe(`agentpost ${manifest.version}\n`);
  });

  it('serves by default, makes the database folder, runs the service as its own process (exec) and stops it gracefully on SIGTERM', async () => {
    const [httpPort, smtpPort] = [await freePort(), await freePort()];
    const child = spawn('sh', [ENTRYPOINT], {
      env: childEnv({
        AGENTPOST_CLI: BIN,
        AGENTPOST_DATABASE_URL: `file:${join(dir.path, 'volume', 'data', 'agentpost.db')}`,
        AGENTPOST_HTTP_PORT: String(httpPort),
        AGENTPOST_SMTP_PORT: String(smtpPort),
        AGENTPOST_API_KEY: TEST_API_KEY,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    for (let attempt = 0; attempt < 1500 && !output.includes('is running'); attempt++)
      await new Promise((done) => setTimeout(done, 20));
    expect(output).toContain('is running: roles http,smtp,worker');
    expect(existsSync(join(dir.path, 'volume', 'data', 'agentpost.db'))).toBe(true);
    // exec: the shell's process is now node's.
    const [command, script] = readFileSync(`/proc/${child.pid}/cmdline`, 'latin1').split('\0');
    expect([basename(command!), script]).toEqual(['node', BIN]);
    // The health check of the container passes against it.
    expect(await healthcheck({ AGENTPOST_HTTP_PORT: String(httpPort), AGENTPOST_SMTP_PORT: String(smtpPort) })).toEqual(
      { code: 0, line: 'healthy' },
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('"shut down"');
  }, 60_000);
});

describe('the health check', () => {
  it('passes for the HTTP role (/readyz) and the SMTP role (220 greeting), and fails where nothing listens', async () => {
    const service = await startTestService();
    try {
      const httpPort = new URL(service.url).port;
      expect(await healthcheck({ AGENTPOST_HTTP_PORT: httpPort })).toEqual({ code: 0, line: 'healthy' });
      expect(await healthcheck({ AGENTPOST_ROLES: 'smtp', AGENTPOST_SMTP_PORT: String(service.smtpPort) })).toEqual({
        code: 0,
        line: 'healthy',
      });
      expect(await healthcheck({ AGENTPOST_ROLES: 'worker' })).toEqual({ code: 0, line: 'healthy' });
    } finally {
      await service.close();
    }
    const closed = await freePort();
    const failed = await healthcheck({ AGENTPOST_HTTP_PORT: String(closed) });
    expect(failed.code).toBe(1);
    expect(failed.line).toMatch(/^unhealthy: /);
    const smtpFailed = await healthcheck({ AGENTPOST_ROLES: 'smtp', AGENTPOST_SMTP_PORT: String(closed) });
    expect(smtpFailed.code).toBe(1);
  }, 60_000);
});

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, unknown>;
}

function compose(file: string): { services: Record<string, ComposeService>; volumes?: Record<string, unknown> } {
  return yaml.load(readFileSync(join(ROOT, file), 'utf8')) as {
    services: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
}

/** The settings a compose service passes, each a real one (a typo would silently stay at its default). */
function expectKnownSettings(service: ComposeService): void {
  const names = Object.keys(service.environment ?? {}).filter((name) => name.startsWith('AGENTPOST_'));
  expect(names.filter((name) => !(SETTING_NAMES as readonly string[]).includes(name))).toEqual([]);
}

describe('the Dockerfile and the compose files', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('the Dockerfile copies what exists, runs the entrypoint and has the health check', () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(' '));
    expect(copied.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
    expect(dockerfile).toContain('ENTRYPOINT ["/bin/sh", "/app/docker/entrypoint.sh"]');
    expect(dockerfile).toContain('CMD ["node", "/app/docker/healthcheck.mjs"]');
    const env = [...dockerfile.matchAll(/\b(AGENTPOST_[A-Z_]+)=/g)].map((match) => match[1]!);
    expect(env.filter((name) => !(SETTING_NAMES as readonly string[]).includes(name))).toEqual([]);
  });

  it('compose.yaml: one service with every role and a volume for the database and key', () => {
    const { services, volumes } = compose('compose.yaml');
    expect(Object.keys(services)).toEqual(['agentpost']);
    const service = services.agentpost!;
    expect(service.command).toEqual(['serve']);
    expect(service.environment?.AGENTPOST_DATABASE_URL).toBe('file:/data/agentpost.db');
    expect(service.volumes).toEqual(['agentpost-data:/data']);
    expect(Object.keys(volumes ?? {})).toEqual(['agentpost-data']);
    expect(service.healthcheck?.test).toEqual(['CMD', 'node', '/app/docker/healthcheck.mjs']);
    expectKnownSettings(service);
  });

  it('compose.roles.yaml: the roles apart, sharing a libSQL server, with one secret key', () => {
    const { services } = compose('compose.roles.yaml');
    expect(Object.keys(services).sort()).toEqual(['http', 'libsql', 'smtp', 'worker']);
    expect(services.libsql!.image).toMatch(/^ghcr\.io\/tursodatabase\/libsql-server:/);
    for (const role of ['http', 'smtp', 'worker']) {
      const service = services[role]!;
      expect(service.command).toEqual(['serve', '--roles', role]);
      expect(service.environment?.AGENTPOST_ROLES).toBe(role);
      expect(service.environment?.AGENTPOST_DATABASE_URL).toBe('http://libsql:8080');
      expect(service.environment?.AGENTPOST_SECRET_KEY).toMatch(/^\$\{AGENTPOST_SECRET_KEY:\?/);
      expect(Object.keys(service.depends_on ?? {})).toContain('libsql');
      expect(service.healthcheck?.test).toEqual(['CMD', 'node', '/app/docker/healthcheck.mjs']);
      expectKnownSettings(service);
    }
  });
});
