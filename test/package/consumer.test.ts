/**
 * The package as a user installs it: `npm pack` of the build, the tarball installed into a temporary project (its
 * dependencies from the registry, through the npm cache), then
 * - a plain ESM JavaScript consumer, under plain `node`, imports every export and runs an AI SDK tool call end to end
 *   against the service embedded in its process (consumer/embedded.mjs);
 * - the installed `agentpost` command serves and stores mail over SMTP, through the worker threads of the build
 *   (consumer/served.mjs);
 * - the README's MCP host set-up for an installed package, `npx --prefix <project> --no agentpost mcp`, lists its tools
 *   over stdio (consumer/mcp-stdio.mjs);
 * - a CommonJS consumer (consumer/commonjs.cjs) is told by `require('agentpost')` that the package is ESM only, with
 *   the `import()` line, which then works;
 * - a TypeScript consumer (consumer/typed.ts) compiles with `strict`, `exactOptionalPropertyTypes` and
 *   `skipLibCheck: false`, under node16 and bundler resolution, with zero errors in its own file and in Agentpost's
 *   declarations. Errors inside third-party declarations are left out and named (THIRD_PARTY_DECLARATION_ERRORS).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuild } from '../helpers/build.js';
import { freePort } from '../helpers/process.js';
import manifest from '../../package.json' with { type: 'json' };

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(import.meta.dirname, 'consumer');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** npm, pack, install and a build when the sources changed: minutes on a busy machine, seconds with a warm cache. */
const SLOW = 10 * 60_000;

/** module/moduleResolution pairs of the TypeScript consumer: node16/node16, and preserve/bundler. */
const RESOLUTIONS = ['node16', 'bundler'] as const;

/**
 * Third-party declarations known to fail under the consumer's settings (not Agentpost's to fix), named so a change
 * shows: `ai` under exactOptionalPropertyTypes, `@ai-sdk/provider` without @types/json-schema, `drizzle-orm`
 * ships declarations for every driver (gel, mysql2, singlestore…) whose packages a consumer does not have; `ical.js`
 * under node16 resolution.
 */
const THIRD_PARTY_DECLARATION_ERRORS = ['ai', '@ai-sdk/provider', 'drizzle-orm', 'ical.js'];

/** The environment of a nested npm: without the npm_* variables of an `npm test` around this run. */
function npmEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^npm_/i.test(name)) env[name] = value;
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: npmEnvironment(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

interface TscError {
  file: string;
  text: string;
}

/** Runs tsc on a tsconfig; its errors by file (relative to the consumer project). */
async function typeErrors(project: string, tsconfig: string): Promise<TscError[]> {
  const output = await run(process.execPath, [TSC, '-p', tsconfig, '--pretty', 'false'], {
    cwd: project,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => stdout,
    (error: Error & { stdout?: string }) => error.stdout ?? String(error),
  );
  // `file(line,col): error TSn: …`, or `error TSn: …` for the configuration itself (then the file is the tsconfig).
  return output
    .split('\n')
    .map((line) => /^(?:(.+?)\(\d+,\d+\): )?error (TS\d+: .*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ file: match[1] ?? relative(project, tsconfig), text: match[2]! }));
}

/** The package a declaration file belongs to (`node_modules/@scope/name/…` or `node_modules/name/…`), if any. */
function packageOf(file: string): string | undefined {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file.split('\\').join('/'));
  return match?.[1];
}

describe('the packed package, installed in a fresh project', () => {
  let work: string;
  let project: string;
  let files: string[];
  const compilations = new Map<(typeof RESOLUTIONS)[number], Promise<TscError[]>>();

  beforeAll(async () => {
    await ensureBuild();
    work = mkdtempSync(join(tmpdir(), 'agentpost-package-'));
    const [packed] = JSON.parse(
      await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT),
    ) as { filename: string; files: { path: string }[] }[];
    files = packed!.files.map((file) => file.path);
    project = join(work, 'project');
    mkdirSync(project);
    // Besides the tarball, what such a project would have: ai and the MCP SDK for its own code, @types/node for tsc.
    const range = (name: keyof typeof manifest.dependencies) => `${name}@${manifest.dependencies[name]}`;
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'agentpost-consumer', private: true, type: 'module' }, null, 2),
    );
    await npm(
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        join(work, packed!.filename),
        range('ai'),
        range('@modelcontextprotocol/sdk'),
        `@types/node@${manifest.devDependencies['@types/node']}`,
      ],
      project,
    );
    cpSync(FIXTURES, join(project, 'ts'), { recursive: true, filter: (source) => !source.endsWith('.mjs') });
    cpSync(FIXTURES, join(project, 'js'), { recursive: true, filter: (source) => !source.endsWith('.ts') });
    // Both compilations start now and run beside the other tests (each takes a while with skipLibCheck off).
    for (const resolution of RESOLUTIONS) {
      const module =
        resolution === 'node16'
          ? { module: 'node16', moduleResolution: 'node16' }
          : { module: 'preserve', moduleResolution: 'bundler' };
      const tsconfig = join(project, 'ts', `tsconfig.${resolution}.json`);
      const compilerOptions = {
        target: 'es2022',
        ...module,
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      };
      writeFileSync(tsconfig, JSON.stringify({ compilerOptions, files: ['typed.ts'] }));
      const errors = typeErrors(project, tsconfig);
      errors.catch(() => undefined);
      compilations.set(resolution, errors);
    }
  }, SLOW);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  }, SLOW);

  it('holds the build, README and LICENSE, and neither tests, benchmarks, CI nor TypeScript sources', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'dist/server/cli.js',
        'dist/src/index.d.ts',
        'dist/storage/migrations/meta/_journal.json',
        'dist/storage/engine/mail-writer-worker.js',
      ]),
    );
    expect(files.filter((file) => /^(test|bench|\.ci|examples|bin)\//.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('leaves out source maps and migration snapshots (the migrations and their journal stay)', () => {
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(files.filter((file) => /migrations\/meta\/.*snapshot/.test(file))).toEqual([]);
    expect(files.filter((file) => /^dist\/storage\/migrations\/\d{4}_.*\.sql$/.test(file)).length).toBeGreaterThan(20);
  });

  it(
    "tells a CommonJS project that require('agentpost') cannot load an ESM-only package, and shows the import() line",
    async () => {
      const { stdout } = await run(process.execPath, [join('js', 'commonjs.cjs')], { cwd: project });
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as {
        refused: Record<string, { code: string; message: string }>;
        imported: number;
      };
      expect(Object.keys(seen.refused)).toHaveLength(5);
      for (const refusal of Object.values(seen.refused)) {
        expect(refusal.code).toBe('ERR_AGENTPOST_ESM_ONLY');
        expect(refusal.message).toContain('ESM only');
        expect(refusal.message).toContain("await import('agentpost')");
      }
      expect(seen.imported).toBeGreaterThan(10);
    },
    SLOW,
  );

  it(
    'imports every export under plain node and runs an AI SDK tool call against the embedded service',
    async () => {
      const { stdout } = await run(process.execPath, [join('js', 'embedded.mjs')], { cwd: project });
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as {
        entries: string[];
        tools: number;
        folders: string[];
        text: string;
      };
      expect(seen.entries).toEqual(['.', './ai', './mcp', './server', './storage']);
      expect(seen.folders).toContain('inbox');
      expect(seen.text).toBe('done');
    },
    SLOW,
  );

  it(
    'runs the installed agentpost command: serves HTTP, takes mail over SMTP through the worker threads of the build',
    async () => {
      // Ports of the range .ci/run keeps outgoing connections from taking (one in the ephemeral range was taken once).
      const [httpPort, smtpPort] = [await freePort(), await freePort()];
      const { stdout } = await run(process.execPath, [join('js', 'served.mjs'), String(httpPort), String(smtpPort)], {
        cwd: project,
      });
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as {
        subjects: string[];
        health: { threads?: unknown };
      };
      expect(seen.subjects).toEqual(['multipart', 'simple']);
    },
    SLOW,
  );

  it(
    'serves MCP over stdio with the README command for an installed package (npx --prefix PROJECT --no agentpost mcp)',
    async () => {
      const { stdout } = await run(process.execPath, [join('js', 'mcp-stdio.mjs'), 'installed', project], {
        cwd: project,
        env: npmEnvironment(),
      });
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as { server: { name: string }; tools: number };
      expect(seen.server.name).toBe('agentpost');
      expect(seen.tools).toBeGreaterThan(10);
    },
    SLOW,
  );

  it(
    'serves MCP over stdio with the README command for a clone (node /path/to/agentpost/dist/server/cli.js mcp)',
    async () => {
      const { stdout } = await run(process.execPath, [join('js', 'mcp-stdio.mjs'), 'clone', ROOT], {
        cwd: project,
        env: npmEnvironment(),
      });
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as { server: { name: string }; tools: number };
      expect(seen.server.name).toBe('agentpost');
      expect(seen.tools).toBeGreaterThan(10);
    },
    SLOW,
  );

  for (const resolution of RESOLUTIONS) {
    it(
      `compiles a strict TypeScript consumer (exactOptionalPropertyTypes, skipLibCheck false) under ${resolution} resolution`,
      async () => {
        const errors = await compilations.get(resolution)!;
        const ours = errors.filter(
          (error) => packageOf(error.file) === undefined || packageOf(error.file) === 'agentpost',
        );
        expect(ours).toEqual([]);
        const thirdParty = [...new Set(errors.map((error) => packageOf(error.file)!))].sort();
        const unexpected = thirdParty.filter((name) => !THIRD_PARTY_DECLARATION_ERRORS.includes(name));
        if (thirdParty.length > 0)
          console.info(
            `${resolution}: errors in third-party declarations left out: ${thirdParty.join(', ')}${unexpected.length ? ` (not yet named: ${unexpected.join(', ')})` : ''}`,
          );
      },
      SLOW,
    );
  }
});
