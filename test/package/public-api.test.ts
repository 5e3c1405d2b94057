/**
 * The package's public API, entry by entry: each entry point of package.json `exports` exports exactly the names
 * listed here (its run-time values, and its types as TypeScript sees them), and docs/embedding.md lists exactly the
 * same names under "Public API", one line each. A name added to or taken from an entry fails here until the list and
 * the docs say so.
 *
 * The entries are read from their sources (`dist/x.js` is the build of `x.ts`, tsconfig.build.json's rootDir is the
 * repository), so no build is needed; consumer.test.ts uses the packed build.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import manifest from '../../package.json' with { type: 'json' };

const ROOT = join(import.meta.dirname, '..', '..');

/** Every entry's public names: values (present at run time) and types (only in the declarations). */
const PUBLIC_API: Record<string, { values: string[]; types: string[] }> = {
  agentpost: {
    values: [
      'AppError',
      'ConfigError',
      'SETTING_NAMES',
      'createAgentpost',
      'createCore',
      'createLogger',
      'createSecretBox',
      'loadConfig',
      'openSecretBox',
      'operations',
      'runOperation',
      'systemClock',
      'systemDns',
      'textGeneratorOf',
      'timeOrderedIds',
      'unknownSettings',
      'verifyWebhookSignature',
    ],
    types: [
      'AgentToolOptions',
      'Agentpost',
      'AgentpostOptions',
      'AgentpostSettings',
      'AnyOperation',
      'Clock',
      'Config',
      'Core',
      'CoreDeps',
      'ErrorCode',
      'Listening',
      'Logger',
      'Metrics',
      'Operation',
      'OperationContext',
      'Principal',
      'SecretBox',
      'SettingName',
      'TextGenerator',
      'VerifyWebhookOptions',
      'WebhookVerification',
    ],
  },
  'agentpost/ai': { values: ['createAgentpostTools'], types: ['LocalToolsOptions', 'RemoteToolsOptions'] },
  'agentpost/mcp': {
    values: ['createMcpServer', 'localEventFeed', 'localExecutor', 'remoteEventFeed', 'remoteExecutor'],
    types: ['EventFeed', 'Executor', 'FeedEvent', 'McpRequestInfo', 'McpServerOptions', 'ToolCall'],
  },
  'agentpost/server': { values: ['createApp'], types: ['CreateAppOptions'] },
  'agentpost/storage': { values: ['createDb', 'migrate', 'tables'], types: ['CreateDbOptions', 'Database'] },
};

const sorted = (names: Iterable<string>) => [...names].sort();

/** The package's entries (`agentpost`, `agentpost/ai`, …) and the source file each one's `import` condition is built from. */
const entries: [entry: string, source: string][] = Object.entries(manifest.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, target]) => {
    const built = (target as { import: string }).import;
    if (!/^\.\/dist\/.+\.js$/.test(built)) throw new Error(`${subpath}: ${built} is not a build under dist/`);
    return [`agentpost${subpath.slice(1)}`, join(ROOT, built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'))];
  });

/** Every name a module exports, types included, as TypeScript resolves them (re-exports followed). */
function exportedNames(files: string[]): Map<string, string[]> {
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  return new Map(
    files.map((file) => {
      const symbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      return [file, sorted(checker.getExportsOfModule(symbol).map((exported) => exported.name))];
    }),
  );
}

/** The names docs/embedding.md lists under "Public API", by entry: the first code span of each `- ` line under an entry's `###` heading. */
function documentedNames(): Map<string, string[]> {
  const page = readFileSync(join(ROOT, 'docs', 'embedding.md'), 'utf8');
  const section = page.slice(
    page.indexOf('\n## Public API\n'),
    page.indexOf('\n## ', page.indexOf('\n## Public API\n') + 1),
  );
  const documented = new Map<string, string[]>();
  let entry: string | undefined;
  for (const line of section.split('\n')) {
    const heading = /^### `([^`]+)`$/.exec(line);
    if (heading) documented.set((entry = heading[1]!), []);
    const item = /^- `([^`]+)`/.exec(line);
    if (item && entry) documented.get(entry)!.push(item[1]!);
  }
  return new Map([...documented].map(([name, names]) => [name, sorted(names)]));
}

describe('the public API', () => {
  it('is the package.json exports, entry by entry', () => {
    expect(entries.map(([entry]) => entry)).toEqual(Object.keys(PUBLIC_API));
  });

  it.each(entries)('%s exports exactly its public values at run time', async (entry, source) => {
    const module = (await import(source)) as Record<string, unknown>;
    expect(sorted(Object.keys(module))).toEqual(sorted(PUBLIC_API[entry]!.values));
  });

  it('exports exactly the public values and types of each entry, as TypeScript sees them', () => {
    const names = exportedNames(entries.map(([, source]) => source));
    for (const [entry, source] of entries) {
      const { values, types } = PUBLIC_API[entry]!;
      expect({ entry, names: names.get(source) }).toEqual({ entry, names: sorted([...values, ...types]) });
    }
  }, 120_000);

  it('is listed in docs/embedding.md, under Public API, name by name', () => {
    const documented = documentedNames();
    expect(sorted(documented.keys())).toEqual(sorted(Object.keys(PUBLIC_API)));
    for (const [entry, { values, types }] of Object.entries(PUBLIC_API)) {
      expect({ entry, names: documented.get(entry) }).toEqual({ entry, names: sorted([...values, ...types]) });
    }
  });

  it('has no wholesale re-export in an entry', () => {
    for (const [entry, source] of entries)
      expect({ entry, wildcard: /^export \*/m.test(readFileSync(source, 'utf8')) }).toEqual({ entry, wildcard: false });
  });
});
