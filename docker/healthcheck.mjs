// The container's health check (Dockerfile HEALTHCHECK, compose healthcheck): exit 0 when the roles this container
// runs answer, 1 otherwise. Role http: GET /readyz on the HTTP port is 200 (the database answers, the background
// loops run where they should). Role smtp without http: the SMTP port greets with 220. The worker role alone has no
// port: the process being there is the check. Reads the same settings as the service (AGENTPOST_ROLES,
// AGENTPOST_HTTP_PORT, AGENTPOST_SMTP_PORT); connects to 127.0.0.1 (the container itself).
import { connect } from 'node:net';

const TIMEOUT_MS = 4_000;
const roles = (process.env.AGENTPOST_ROLES ?? 'http,smtp,worker').split(',').map((role) => role.trim());
const host = process.env.AGENTPOST_HEALTHCHECK_HOST ?? '127.0.0.1';
const httpPort = Number(process.env.AGENTPOST_HTTP_PORT ?? 3000);
const smtpPort = Number(process.env.AGENTPOST_SMTP_PORT ?? 2525);

async function httpReady() {
  const response = await fetch(`http://${host}:${httpPort}/readyz`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`/readyz answered ${response.status}`);
}

function smtpGreets() {
  return new Promise((done, fail) => {
    const socket = connect({ host, port: smtpPort });
    socket.setTimeout(TIMEOUT_MS, () => {
      socket.destroy();
      fail(new Error('no SMTP greeting in time'));
    });
    socket.once('error', fail);
    socket.once('data', (data) => {
      socket.end('QUIT\r\n');
      if (/^220[ -]/.test(data.toString('latin1'))) done();
      else fail(new Error(`SMTP greeted with ${data.toString('latin1').trim()}`));
    });
  });
}

try {
  if (roles.includes('http')) await httpReady();
  else if (roles.includes('smtp')) await smtpGreets();
  process.stdout.write('healthy\n');
  process.exit(0);
} catch (error) {
  process.stdout.write(`unhealthy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
