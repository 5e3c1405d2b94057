/**
 * A TCP proxy on loopback that behaves like a network link, for benches that compare a client over one (not a bench
 * itself: run.ts loads only `*.bench.ts`). Run as a bench server (load-tools.ts `startBenchServer`):
 * `link-proxy.ts <target port> <megabits a second>,<round trip ms>`. It listens on an ephemeral port of 127.0.0.1,
 * prints `{"url", "port"}` once it listens, and forwards each connection to the target port: every byte arrives
 * half the round trip after it was sent, in order, and the server's bytes to the client (the direction of a FETCH)
 * no faster than the rate. It stops reading a side that is more than 4 MB ahead of the link.
 */
import { connect, createServer, type Socket } from 'node:net';

const [target, spec] = process.argv.slice(2);
const [megabits, roundTripMs] = (spec ?? '').split(',').map(Number);
if (!target || !Number.isFinite(megabits) || !Number.isFinite(roundTripMs) || megabits! <= 0 || roundTripMs! < 0) {
  process.stderr.write('usage: link-proxy.ts <target port> <megabits a second>,<round trip ms>\n');
  process.exit(2);
}
const bytesPerMs = (megabits! * 1_000_000) / 8 / 1000;
const oneWayMs = roundTripMs! / 2;
const AHEAD_BYTES = 4 * 1024 * 1024;

/** Forwards `from` to `to` with the link's delay, and at its rate when `paced`. */
function forward(from: Socket, to: Socket, paced: boolean): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let queuedBytes = 0;
  let linkFreeAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const deliver = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.at <= now) {
      const { chunk } = queue.shift()!;
      queuedBytes -= chunk.length;
      to.write(chunk);
    }
    if (queuedBytes < AHEAD_BYTES / 4 && from.isPaused()) from.resume();
    if (queue.length > 0) timer = setTimeout(deliver, Math.max(0, queue[0]!.at - now));
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    const now = performance.now();
    const start = Math.max(now, linkFreeAt);
    linkFreeAt = paced ? start + chunk.length / bytesPerMs : start;
    queue.push({ at: linkFreeAt + oneWayMs, chunk });
    queuedBytes += chunk.length;
    if (queuedBytes > AHEAD_BYTES) from.pause();
    timer ??= setTimeout(deliver, Math.max(0, queue[0]!.at - now));
  });
  from.on('end', () => {
    ended = true;
    timer ??= setTimeout(deliver, 0);
  });
  from.on('error', () => to.destroy());
  from.on('close', () => {
    if (!ended) to.destroy();
  });
}

const server = createServer((client) => {
  const upstream = connect(Number(target), '127.0.0.1');
  forward(client, upstream, false);
  forward(upstream, client, true);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `tcp://127.0.0.1:${port}`, port })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
