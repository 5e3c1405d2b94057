/**
 * The service of bench/soak.bench.ts, run as a child process so that its memory is measured alone (never imported:
 * it starts when loaded): the real service
 * on a fresh database file, every role, rate limits off, webhooks allowed to loopback. Prints one JSON line
 * `{ url, smtpPort, pid }` once listening; stops on SIGTERM.
 */
import { startService } from '../server/main.js';
import { loadConfig } from '../src/index.js';

const [databaseFile, apiKey] = process.argv.slice(2);
if (!databaseFile || !apiKey) {
  process.stderr.write('usage: soak-server.ts <database file> <api key>\n');
  process.exit(2);
}
const service = await startService(
  loadConfig({
    AGENTPOST_DATABASE_URL: `file:${databaseFile}`,
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_API_KEY: apiKey,
    AGENTPOST_LOG_LEVEL: 'silent',
    AGENTPOST_RATE_LIMIT_APPLICATION: '0',
    AGENTPOST_RATE_LIMIT_GRANT: '0',
    AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
    AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
  }),
);
process.once('SIGTERM', () => void service.close().then(() => process.exit(0)));
process.stdout.write(`${JSON.stringify({ url: service.url, smtpPort: service.smtpPort, pid: process.pid })}\n`);
