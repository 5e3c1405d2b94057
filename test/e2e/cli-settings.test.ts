/**
 * Settings through the real command: `agentpost serve` refuses to start on a bad `AGENTPOST_*` value, naming it,
 * and warns about a misspelled name (naming the setting it probably meant) but starts. The same checks through the
 * embedding API.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentpost } from '../../server/embed.js';
import { ConfigError, unknownSettings, type Logger } from '../../src/index.js';
import { tempDir } from '../helpers/service.js';
import { BIN, ROOT, childEnv } from '../helpers/process.js';

const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

function database(): string {
  const dir = tempDir('agentpost-settings-');
  dirs.push(dir);
  return `file:${join(dir.path, 'agentpost.db')}`;
}

/** The environment of a child, with this file's defaults. */
const childEnvOf = (env: Record<string, string>) =>
  childEnv({ AGENTPOST_HTTP_PORT: '0', AGENTPOST_SMTP_PORT: '0', ...env });

describe.concurrent('settings at start-up', { timeout: 60_000 }, () => {
  it('serve exits 1 on a bad value, naming the variable, before opening anything', async () => {
    const url = database();
    const failed = await promisify(execFile)(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env: childEnvOf({ AGENTPOST_DATABASE_URL: url, AGENTPOST_SHUTDOWN_TIMEOUT: 'soon' }),
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('AGENTPOST_SHUTDOWN_TIMEOUT: "soon" is not a duration');
    const token = await promisify(execFile)(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env: childEnvOf({ AGENTPOST_DATABASE_URL: url, AGENTPOST_METRICS_TOKEN: 'short' }),
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(token.code).toBe(1);
    expect(token.stderr).toContain('AGENTPOST_METRICS_TOKEN: must be at least 16 characters');
    expect(existsSync(url.slice('file:'.length))).toBe(false);
  });

  it('serve exits 1 on an unknown role, from --roles or AGENTPOST_ROLES, naming where it came from, before opening anything', async () => {
    const url = database();
    const run = (args: string[], env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [BIN, 'serve', ...args], {
        cwd: ROOT,
        env: childEnvOf({ AGENTPOST_DATABASE_URL: url, ...env }),
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
      );
    const option = await run(['--roles', 'http,mail'], {});
    expect(option.code).toBe(1);
    expect(option.stderr).toContain(
      '--roles: "mail" is not a role (expected a comma-separated subset of http, smtp, worker',
    );
    const setting = await run([], { AGENTPOST_ROLES: 'workers' });
    expect(setting.code).toBe(1);
    expect(setting.stderr).toContain('AGENTPOST_ROLES: "workers" is not a role');
    expect(existsSync(url.slice('file:'.length))).toBe(false);
  });

  it('serve warns about a misspelled AGENTPOST_ variable, naming the closest setting, and starts', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env: childEnvOf({
        AGENTPOST_DATABASE_URL: database(),
        AGENTPOST_LOG_LEVEL: 'warn',
        AGENTPOST_SHUTDOWN_TIMOUT: '5s',
        AGENTPOST_COMPLETELY_UNKNOWN: 'x',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', done));
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('is listening on')) ready();
      });
      void exited.then((code) => fail(new Error(`exited ${code}: ${stderr}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const warnings = stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: string; message: string });
    expect(warnings).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message:
          'AGENTPOST_SHUTDOWN_TIMOUT is not an Agentpost setting and is ignored; did you mean AGENTPOST_SHUTDOWN_TIMEOUT?',
      }),
    );
    expect(warnings).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(
          /^AGENTPOST_COMPLETELY_UNKNOWN is not an Agentpost setting and is ignored \(see the configuration table/,
        ),
      }),
    );
  });

  it('suggests the closest known name, and none when nothing is close', () => {
    expect(
      unknownSettings({
        AGENTPOST_HTTP_PROT: '1',
        AGENTPOST_DATABSE_URL: 'x',
        AGENTPOST_LOGLEVEL: 'x',
        AGENTPOST_ZZZ: 'x',
        AGENTPOST_HTTP_PORT: '1',
        PATH: '/bin',
      }),
    ).toEqual([
      { name: 'AGENTPOST_DATABSE_URL', suggestion: 'AGENTPOST_DATABASE_URL' },
      { name: 'AGENTPOST_HTTP_PROT', suggestion: 'AGENTPOST_HTTP_PORT' },
      { name: 'AGENTPOST_LOGLEVEL', suggestion: 'AGENTPOST_LOG_LEVEL' },
      { name: 'AGENTPOST_ZZZ', suggestion: undefined },
    ]);
  });

  it('createAgentpost validates like the environment: a bad value throws naming it, a misspelled name is warned about', async () => {
    await expect(
      createAgentpost({ AGENTPOST_DATABASE_URL: database(), AGENTPOST_HTTP_PORT: 'eighty' }),
    ).rejects.toThrow(ConfigError);
    await expect(createAgentpost({ AGENTPOST_DATABASE_URL: database(), AGENTPOST_HTTP_PORT: 70_000 })).rejects.toThrow(
      'AGENTPOST_HTTP_PORT: must be between 0 and 65535',
    );
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} };
    const agentpost = await createAgentpost(
      {
        AGENTPOST_DATABASE_URL: database(),
        AGENTPOST_API_KEY: 'embedded-key-0123456789',
        ...({ AGENTPOST_RATE_LIMIT_GRNT: '5' } as object),
      },
      { deps: { logger } },
    );
    try {
      expect(warnings).toEqual([
        'AGENTPOST_RATE_LIMIT_GRNT is not an Agentpost setting and is ignored; did you mean AGENTPOST_RATE_LIMIT_GRANT?',
      ]);
      // Works before start(): the fetch handler answers; readiness waits for the workers.
      const grants = await agentpost.fetch(
        new Request('http://embedded/v3/grants', { headers: { authorization: 'Bearer embedded-key-0123456789' } }),
      );
      expect(grants.status).toBe(200);
      expect((await agentpost.fetch(new Request('http://embedded/readyz'))).status).toBe(503);
      const { url } = await agentpost.start();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(agentpost.apiKey).toBe('embedded-key-0123456789');
      expect(Object.keys(agentpost.tools())).toContain('send_message');
    } finally {
      await agentpost.close();
    }
  });
});
