#!/usr/bin/env node
/**
 * @module server/cli
 * The `agentpost` command: `serve` (default; `--roles` picks the parts it runs), `apps`, `keys`, `grants` (the kill
 * switch), `service-accounts`, `mcp`. Management commands work on the database named by `AGENTPOST_DATABASE_URL`, the same one the service uses.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  createCore,
  createLogger,
  loadConfig,
  parseRoles,
  startedByNpm,
  unknownSettingMessage,
  unknownSettings,
  type Config,
  type Core,
} from '../src/index.js';
import { CreateApiKeyInputSchema } from '../src/schemas/api-keys.js';
import { SuspendGrantInputSchema } from '../src/schemas/oversight.js';
import { runStdioServer } from '../tools/stdio.js';
import { formatDoctor, runDoctor, secretKeyCheck } from './doctor.js';
import { createDeps, startService } from './main.js';

const USAGE = `Usage: agentpost <command>   (agentpost --version: the installed version)

  serve [--roles http,smtp,worker]              run the service (the default command): the HTTP API and /mcp (http), the
                                                inbound SMTP listener (smtp) and the background work (worker); all roles
                                                unless --roles (or AGENTPOST_ROLES) names some
  apps create --name NAME [--plan trial|production] [--test]
                                                create an application; prints its id and API key;
                                                --test: in test mode, its clock moves only when told
  apps list                                     list applications
  keys create [--app ID] [--name NAME] [--grant ID]… [--workspace ID]… [--permission NAME]… [--expires-at UNIX]
                     [--agent]                  issue an API key (default application unless --app); scoped to the
                                                grants and workspaces named (else the whole application), with the
                                                permissions named (else all), expiring at the time given (else never);
                                                --agent: an agent's key (its sends are agent sends, docs/oversight.md)
  keys list [--app ID]                          list API keys (never the keys themselves)
  keys revoke KEY_ID [--app ID]                 revoke a key at once
  grants suspend GRANT_ID --reason TEXT [--app ID]
                                                suspend a grant (the kill switch): every send, scheduled send and
                                                write is refused with the reason until it is resumed
  grants resume GRANT_ID [--app ID]             resume a suspended grant; scheduled sends that fell due leave now
  service-accounts create [--app ID]            issue a service account for signed /v3/admin requests;
                                                prints the credentials the nylas SDK's ServiceAccountSigner takes
  doctor                                        check a deployment with its settings: the HTTP and SMTP ports answer,
                                                the relay answers, the secret key is there, the database is writable,
                                                each custom domain's MX, SPF, DKIM and DMARC records are published
                                                as expected (through AGENTPOST_DNS_SERVERS); exit 1 if any fails
  mcp                                           MCP server over stdio: against AGENTPOST_URL with AGENTPOST_API_KEY,
                                                or embedded on the local database; AGENTPOST_GRANT_ID binds one mailbox
`;

async function withCore<T>(config: Config, work: (core: Core) => Promise<T>): Promise<T> {
  const deps = await createDeps({ ...config, logLevel: 'warn' });
  const core = createCore(deps);
  try {
    const { generatedKey } = await core.accounts.applications.ensureDefaultApplication();
    // A management command on a fresh database makes the default application; its key is shown once, here
    // (on stderr, so the command's own output stays parseable), or it would be lost.
    if (generatedKey) process.stderr.write(`${defaultKeyNotice(generatedKey)}\n`);
    return await work(core);
  } finally {
    await deps.db.close();
  }
}

/** The message that shows a generated default key, the only time it is ever shown. */
function defaultKeyNotice(key: string): string {
  return `\nAgentpost created the default application. Its API key (shown once, only its hash is stored):\n\n  ${key}\n`;
}

/** How often `serve` started by npm checks that its parent is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Copies of one signal within this window count once. Ctrl-C in a terminal reaches every process of the foreground
 * group (npm and the service alike) and npm passes its copy on; a supervisor that signals a whole process group
 * (systemd's default, a shell) does the same with SIGTERM: the copies arrive milliseconds apart. Only a signal that
 * comes later than this after the first forces an exit.
 */
const SIGNAL_COPY_WINDOW_MS = 2_000;

/**
 * What a signal means for a service that may already be shutting down: `shutdown` (the first), `copy` (another copy
 * of the first, within {@link SIGNAL_COPY_WINDOW_MS}) or `force` (sent again later: exit at once).
 */
function signalMeaning(firstAt: number | undefined, now: number): 'shutdown' | 'copy' | 'force' {
  if (firstAt === undefined) return 'shutdown';
  return now - firstAt < SIGNAL_COPY_WINDOW_MS ? 'copy' : 'force';
}

/**
 * `serve`: runs until SIGTERM or SIGINT, then shuts down gracefully (see RunningService.close) and exits 0. Copies of
 * the signal within {@link SIGNAL_COPY_WINDOW_MS} count once; a signal sent again later exits at once (1). Under
 * `npm start` or `npx`, npm may exit before the service (or signal a shell that dies without passing the signal on);
 * so a process started by npm also shuts down, the same way, when its parent goes away, and that never forces an exit.
 */
async function serveCommand(config: Config, watchParent: boolean): Promise<void> {
  // Handlers first: a signal during start-up must not kill the process half-way (the database is open).
  let stopping: ((signal: string) => void) | undefined;
  let early: string | undefined;
  const onSignal = (signal: string) => {
    if (stopping) return stopping(signal);
    early ??= signal;
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  const service = await startService(config);
  const { logger } = service.core.deps;
  let firstSignalAt: number | undefined;
  stopping = (signal: string) => {
    const meaning = signalMeaning(firstSignalAt, performance.now());
    if (meaning !== 'shutdown') {
      if (signal === 'parent exited') return;
      if (meaning === 'copy') return logger.info('signal copy ignored: already shutting down', { signal });
      logger.warn('signal sent again: exiting at once', { signal });
      process.exit(1);
    }
    firstSignalAt = performance.now();
    clearInterval(parentCheck);
    logger.info('shutting down', { signal, timeout_ms: config.shutdownTimeoutMs });
    service.close().then(
      () => {
        logger.info('shut down');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('shutdown failed', {
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
        process.exit(1);
      },
    );
  };
  const parent = process.ppid;
  const parentCheck = setInterval(() => {
    if (watchParent && process.ppid !== parent) stopping?.('parent exited');
  }, PARENT_CHECK_MS);
  parentCheck.unref();
  if (early) return stopping(early);
  if (service.generatedKey) process.stdout.write(`${defaultKeyNotice(service.generatedKey)}\n`);
  // One line per part, the last one once everything runs (scripts and tests wait for it).
  if (service.url !== undefined)
    process.stdout.write(`Agentpost is listening on ${service.url} (API at ${service.url}/v3)\n`);
  if (service.smtpPort !== undefined)
    process.stdout.write(`Agentpost SMTP is listening on ${config.host}:${service.smtpPort}\n`);
  process.stdout.write(`Agentpost is running: roles ${service.roles.join(',')}\n`);
  if (service.url !== undefined) process.stdout.write(nextSteps(service.url, config, service.generatedKey));
}

/**
 * What to do next, printed by `serve` once it runs: the dashboard, a curl line that creates a mailbox (on the first
 * configured domain, else on a local `.localhost` trial domain made first, so a first send to it never leaves the
 * machine), and an MCP host's configuration for this service.
 */
function nextSteps(url: string, config: Config, generatedKey: string | undefined): string {
  const key = generatedKey ?? '$AGENTPOST_API_KEY';
  const domain = config.domains[0] ?? 'demo.agentpost.localhost';
  const json = `-H "Authorization: Bearer ${key}" -H 'Content-Type: application/json'`;
  const lines = ['', 'Next steps:'];
  if (config.dashboard.path !== undefined)
    lines.push(`  Dashboard: ${url}${config.dashboard.path} (sign in with the API key)`);
  if (config.domains.length === 0)
    lines.push(
      '  Add a local domain (mail between its mailboxes never leaves this machine):',
      `    curl -s -X POST ${url}/v3/admin/domains ${json} -d '{"name": "Demo", "domain_address": "${domain}"}'`,
    );
  lines.push(
    '  Create a mailbox:',
    `    curl -s -X POST ${url}/v3/connect/custom ${json} -d '{"provider": "nylas", "settings": {"email": "agent@${domain}"}}'`,
    '  MCP host configuration (stdio; or Streamable HTTP at ' + `${url}/mcp):`,
    `    ${JSON.stringify({ mcpServers: { agentpost: { command: 'node', args: [process.argv[1] ?? 'agentpost', 'mcp'], env: { AGENTPOST_URL: url, AGENTPOST_API_KEY: key } } } })}`,
    '  Examples: the self-checking scripts in examples/ (npx tsx examples/quickstart.ts); docs in docs/.',
    '',
  );
  return lines.join('\n');
}

/** The installed package's version: package.json above this module (dist/server/ in a package, server/ in a clone). */
function packageVersion(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'agentpost' && manifest.version) return manifest.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

/** Runs the command line; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      app: { type: 'string' },
      grant: { type: 'string', multiple: true },
      workspace: { type: 'string', multiple: true },
      permission: { type: 'string', multiple: true },
      'expires-at': { type: 'string' },
      agent: { type: 'boolean' },
      test: { type: 'boolean' },
      roles: { type: 'string' },
      reason: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
  if (values.version || positionals[0] === 'version') {
    process.stdout.write(`agentpost ${packageVersion()}\n`);
    return 0;
  }
  const [command = 'serve', sub, argument] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  let config = loadConfig(process.env);
  if (values.roles !== undefined) {
    if (command !== 'serve') throw new Error('--roles is an option of serve only');
    const parsed = parseRoles(values.roles);
    if ('error' in parsed) throw new ConfigError(`--roles: ${parsed.error}`);
    config = { ...config, roles: parsed.roles };
  }
  // Likely typos: a misspelled setting would silently stay at its default.
  const warnings = createLogger(config.logLevel);
  for (const unknown of unknownSettings(process.env))
    warnings.warn(unknownSettingMessage(unknown), {
      variable: unknown.name,
      ...(unknown.suggestion ? { suggestion: unknown.suggestion } : {}),
    });
  const appOf = async (core: Core) => values.app ?? (await core.accounts.applications.defaultApplicationId());

  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve':
      await serveCommand(config, startedByNpm(process.env));
      return -1;
    case 'apps create': {
      if (!values.name) throw new Error('apps create needs --name NAME');
      const plan = values.plan ?? 'production';
      if (plan !== 'trial' && plan !== 'production') throw new Error('--plan must be trial or production');
      const created = await withCore(config, (core) =>
        core.accounts.applications.createApplication({ name: values.name!, plan, testMode: values.test === true }),
      );
      process.stdout.write(
        `application_id: ${created.application.id}\napi_key: ${created.apiKey}\n` +
          (created.application.test_mode ? 'test_mode: true (POST /v3/test-clock/advance moves its clock)\n' : ''),
      );
      return 0;
    }
    case 'apps list': {
      const apps = await withCore(config, (core) => core.accounts.applications.listApplications());
      for (const app of apps)
        process.stdout.write(
          `${app.id}\t${app.plan}\t${app.is_default ? 'default\t' : '\t'}${app.test_mode ? 'test\t' : ''}${app.name}\n`,
        );
      return 0;
    }
    case 'keys create': {
      // The same schema as POST /v3/api-keys, so the CLI and the API refuse the same input alike.
      const input = CreateApiKeyInputSchema.parse({
        name: values.name ?? 'cli',
        ...(values.grant || values.workspace
          ? { scope: { grant_ids: values.grant, workspace_ids: values.workspace } }
          : {}),
        ...(values.permission ? { permissions: values.permission.flatMap((item) => item.split(',')) } : {}),
        ...(values['expires-at'] !== undefined ? { expires_at: Number(values['expires-at']) } : {}),
        ...(values.agent ? { agent: true } : {}),
      });
      const created = await withCore(config, async (core) =>
        core.accounts.applications.createKey(await appOf(core), {
          name: input.name,
          scope: input.scope,
          permissions: input.permissions,
          expiresAt: input.expires_at,
          agent: input.agent,
        }),
      );
      process.stdout.write(`key_id: ${created.id}\napi_key: ${created.apiKey}\n`);
      return 0;
    }
    case 'keys list': {
      const keys = await withCore(config, async (core) => core.accounts.applications.listKeys(await appOf(core)));
      for (const key of keys) {
        process.stdout.write(
          `${key.id}\t${key.prefix}…\t${key.revoked_at === null ? 'active' : 'revoked'}\t${key.name}${key.agent ? '\tagent' : ''}\n`,
        );
      }
      return 0;
    }
    case 'keys revoke': {
      if (!argument) throw new Error('keys revoke needs KEY_ID');
      await withCore(config, async (core) => core.accounts.applications.revokeKey(await appOf(core), argument));
      process.stdout.write(`revoked ${argument}\n`);
      return 0;
    }
    case 'grants suspend': {
      if (!argument) throw new Error('grants suspend needs GRANT_ID');
      // The same schema as POST /v3/grants/{id}/suspend.
      const input = SuspendGrantInputSchema.parse({ grant_id: argument, reason: values.reason });
      const grant = await withCore(config, async (core) =>
        core.accounts.grants.suspend({ applicationId: await appOf(core), via: 'local' }, input),
      );
      process.stdout.write(`suspended ${grant.id} (${grant.email}): ${grant.suspended_reason ?? ''}\n`);
      return 0;
    }
    case 'grants resume': {
      if (!argument) throw new Error('grants resume needs GRANT_ID');
      const grant = await withCore(config, async (core) =>
        core.accounts.grants.resume({ applicationId: await appOf(core), via: 'local' }, argument),
      );
      process.stdout.write(`resumed ${grant.id} (${grant.email})\n`);
      return 0;
    }
    case 'mcp': {
      const server = await runStdioServer(config, (settings) =>
        createDeps({ ...settings, logLevel: settings.logLevel === 'info' ? 'warn' : settings.logLevel }),
      );
      const stop = () => {
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.stdin.on('end', stop);
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      return -1;
    }
    case 'doctor': {
      // The key is looked for before the database opens (opening a fresh file database makes a key file).
      const key = secretKeyCheck(config);
      const checks = await withCore(config, (core) => runDoctor(config, core));
      const all = [key, ...checks];
      process.stdout.write(formatDoctor(all));
      return all.every((item) => item.ok) ? 0 : 1;
    }
    case 'service-accounts create': {
      const credentials = await withCore(config, async (core) =>
        core.accounts.applications.createServiceAccount(await appOf(core)),
      );
      process.stdout.write(`${JSON.stringify(credentials, null, 2)}\n`);
      return 0;
    }
    default:
      process.stderr.write(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `agentpost: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
