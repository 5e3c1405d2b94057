/**
 * The layering check (STYLE.md, "Layering" and "Front doors"): `storage ← src ← { tools, server }`, src free of
 * transports, ical.js only in the ical modules, no import cycles (type-only imports count), areas never importing
 * the operations registry, schemas and ports importing no area, areas used only through their front doors (index.ts,
 * contracts.ts). The rules live in .dependency-cruiser.cjs; this test runs them on the repository, and on
 * a small fixture that breaks each rule once, so a rule that matches nothing (a typo in a path) fails here too.
 * One rule is checked here rather than by dependency-cruiser, which sees modules but not the names imported from
 * them: raw SQL (`sql` imported from drizzle-orm, or a sql`…` fragment) only in an area's store modules (*-store.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const LAYERS = ['src', 'storage', 'tools', 'server'];

/** `rule: from → to` for each violation of .dependency-cruiser.cjs among the layers under `baseDir`. */
async function violations(baseDir: string): Promise<string[]> {
  const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const tsConfigFile = join(baseDir, 'tsconfig.json');
  const output = await cruise(
    LAYERS,
    { ...options, baseDir, tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  const result = output.output as ICruiseResult;
  return result.summary.violations
    .map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
    .sort();
}

/**
 * Modules of src still holding raw SQL beside their rules, each being moved into a store module of its area
 * (issue 34); remove a name once its module is converted.
 */
const RAW_SQL_NOT_YET_IN_STORES: string[] = [];

/** The TypeScript modules under `dir`, as paths relative to `baseDir`. */
function modulesUnder(baseDir: string, dir: string): string[] {
  return readdirSync(join(baseDir, dir), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => relative(baseDir, join(baseDir, dir, path)));
}

/** The modules of `src` outside the store modules (*-store.ts) that import `sql` from drizzle-orm or hold a sql`…` fragment. */
function rawSqlOutsideStores(baseDir: string, exempt: readonly string[] = []): string[] {
  const importsSql = (text: string) =>
    [...text.matchAll(/import\s+(?!type\b)\{([^}]*)\}\s*from\s*'drizzle-orm'/g)].some((match) =>
      match[1]!.split(',').some((name) => /^sql\b/.test(name.trim())),
    );
  return modulesUnder(baseDir, 'src')
    .filter((path) => !path.endsWith('-store.ts') && !exempt.includes(path))
    .filter((path) => {
      const text = readFileSync(join(baseDir, path), 'utf8');
      return importsSql(text) || /\bsql(<[^>]*>)?`/.test(text);
    })
    .sort();
}

describe('layering', () => {
  it('holds in this repository', async () => {
    expect(await violations(ROOT)).toEqual([]);
  }, 120_000);

  it('keeps raw SQL in the store modules of src', () => {
    expect(rawSqlOutsideStores(ROOT, RAW_SQL_NOT_YET_IN_STORES)).toEqual([]);
  });

  describe('on a fixture that breaks every rule', () => {
    const fixture = mkdtempSync(join(tmpdir(), 'agentpost-layering-'));
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));

    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true },
      }),
      'storage/db.ts': "import { core } from '../src/core.js';\nexport const db = core;\n",
      'src/core.ts': 'export const core = 1;\n',
      'src/uses-server.ts': "import { app } from '../server/app.js';\nexport const x = app;\n",
      'src/uses-tools.ts': "import { tools } from '../tools/tools.js';\nexport const x = tools;\n",
      'src/uses-hono.ts': "import type { Context } from 'hono';\nexport type X = Context;\n",
      'src/uses-mcp.ts':
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\nexport const x = McpServer;\n",
      'src/uses-ai.ts': "import { tool } from 'ai';\nexport const x = tool;\n",
      'src/uses-hono-node-server.ts': "import { serve } from '@hono/node-server';\nexport const x = serve;\n",
      'src/calendar/ical.ts': "import ICAL from 'ical.js';\nexport const ical = ICAL;\n",
      'src/calendar/feed.ts': "import ICAL from 'ical.js';\nexport const feed = ICAL;\n",
      'tools/tools.ts':
        "import { app } from '../server/app.js';\nimport { core } from '../src/core.js';\nexport const tools = [app, core];\n",
      'server/app.ts': "import { core } from '../src/core.js';\nexport const app = core;\n",
      // A circle of type-only imports: a type still ties two modules (a circle is reported once, at its first edge).
      'src/circle-a.ts': "import type { B } from './circle-b.js';\nexport type A = B | 'a';\n",
      'src/circle-b.ts': "import type { A } from './circle-a.js';\nexport type B = A | 'b';\n",
      'src/operations/define-operation.ts': 'export interface OperationContext { requestId: string }\n',
      'src/mail/send.ts':
        "import type { OperationContext } from '../operations/define-operation.js';\nexport type Send = (context: OperationContext) => void;\n",
      'src/calendar/zones.ts': "export const zones = ['UTC'];\n",
      'src/schemas/events.ts': "import { zones } from '../calendar/zones.js';\nexport const EventSchema = zones;\n",
      'src/grants/contracts.ts': 'export interface Grant { id: string }\n',
      'src/ports/clock.ts':
        "import type { Grant } from '../grants/contracts.js';\nexport interface Clock { now(grant: Grant): Date }\n",
      // An area used past its front door (index.ts, contracts.ts), by another area and by a face; through it, no violation.
      'src/grants/grant-service.ts': 'export const grants = 1;\n',
      'src/grants/index.ts': "export { grants } from './grant-service.js';\n",
      'src/mail/uses-grants.ts': "import { grants } from '../grants/grant-service.js';\nexport const x = grants;\n",
      'src/mail/through-front-door.ts':
        "import { grants } from '../grants/index.js';\nimport type { Grant } from '../grants/contracts.js';\nexport const y: Grant = { id: String(grants) };\n",
      'server/uses-area.ts': "import { zones } from '../src/calendar/zones.js';\nexport const x = zones;\n",
      // A worker thread's door (for-workers.ts) may be used from outside; it must not load the area through index.ts.
      'src/grants/for-workers.ts': "export { grants } from './index.js';\n",
      'src/mail/thread-entry.ts': "import { grants } from '../grants/for-workers.js';\nexport const x = grants;\n",
      // Raw SQL: in a store module it is fine; beside rules, imported or written as a fragment, it is not.
      'src/grants/grant-store.ts': "import { sql } from 'drizzle-orm';\nexport const count = sql`count(*)`;\n",
      'src/grants/uses-sql.ts': "import { eq, sql } from 'drizzle-orm';\nexport const x = [eq, sql];\n",
      'src/grants/uses-fragment.ts':
        'declare const sql: (parts: TemplateStringsArray) => string;\nexport const x = sql`rowid`;\n',
      'src/grants/uses-sql-type.ts':
        "import { type SQL } from 'drizzle-orm';\nimport type { sql } from 'drizzle-orm';\nexport type X = [SQL, typeof sql];\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(fixture, path)), { recursive: true });
      writeFileSync(join(fixture, path), text);
    }
    // The real packages, so the npm rules see resolved node_modules paths as they do in the repository.
    symlinkSync(join(ROOT, 'node_modules'), join(fixture, 'node_modules'), 'dir');

    it('reports each violation, and only those', async () => {
      const found = await violations(fixture);
      expect(found.map((line) => line.replace(/→ .*node_modules\/.*$/, '→ node_modules/…'))).toEqual(
        [
          'areas-never-import-operations: src/mail/send.ts → src/operations/define-operation.ts',
          'areas-only-through-front-doors: server/uses-area.ts → src/calendar/zones.ts',
          'areas-only-through-front-doors: src/mail/uses-grants.ts → src/grants/grant-service.ts',
          'ical-js-only-in-ical-modules: src/calendar/feed.ts → node_modules/…',
          'no-circular: src/circle-a.ts → src/circle-b.ts',
          'ports-import-no-area: src/ports/clock.ts → src/grants/contracts.ts',
          'schemas-never-import-areas: src/schemas/events.ts → src/calendar/zones.ts',
          'src-imports-no-face: src/uses-server.ts → server/app.ts',
          'src-imports-no-face: src/uses-tools.ts → tools/tools.ts',
          'src-imports-no-transport: src/uses-ai.ts → node_modules/…',
          'src-imports-no-transport: src/uses-hono-node-server.ts → node_modules/…',
          'src-imports-no-transport: src/uses-hono.ts → node_modules/…',
          'src-imports-no-transport: src/uses-mcp.ts → node_modules/…',
          'storage-imports-no-layer-above: storage/db.ts → src/core.ts',
          'tools-import-no-server: tools/tools.ts → server/app.ts',
          'worker-doors-stay-lean: src/grants/for-workers.ts → src/grants/index.ts',
        ].sort(),
      );
    }, 120_000);

    it('reports raw SQL outside the store modules, and only there', () => {
      expect(rawSqlOutsideStores(fixture)).toEqual(['src/grants/uses-fragment.ts', 'src/grants/uses-sql.ts']);
    });
  });
});
