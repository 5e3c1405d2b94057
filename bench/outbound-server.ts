/**
 * One server of bench/outbound.bench.ts, run as a child process so that two builds can be measured side by side:
 *   node --import tsx bench/outbound-server.ts <root> <database file> <relay port> <api key>
 * `<root>` is the checkout whose `server/main.ts` starts the service (this one, or a reference build's worktree).
 * Prints one JSON line `{ url }` on stdout once listening; stops on SIGTERM.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, database, relayPort, apiKey] = process.argv.slice(2);
if (!root || !database || !relayPort || !apiKey) {
  process.stderr.write('usage: outbound-server.ts <root> <database file> <relay port> <api key>\n');
  process.exit(2);
}
interface Started {
  url: string;
  close(): Promise<void>;
}
const main = (await import(pathToFileURL(join(root, 'server/main.ts')).href)) as {
  startService(config: unknown): Promise<Started>;
};
const index = (await import(pathToFileURL(join(root, 'src/index.ts')).href)) as {
  loadConfig(env: Record<string, string>): unknown;
};
const service = await main.startService(
  index.loadConfig({
    AGENTPOST_DATABASE_URL: `file:${database}`,
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_API_KEY: apiKey,
    AGENTPOST_LOG_LEVEL: 'silent',
    AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${relayPort}`,
    AGENTPOST_WORKER_POLL_MS: '50',
  }),
);
process.once('SIGTERM', () => void service.close().then(() => process.exit(0)));
process.stdout.write(`${JSON.stringify({ url: service.url })}\n`);
