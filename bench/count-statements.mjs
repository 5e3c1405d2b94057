/**
 * A debug preload for bench/statements-per-send.ts, never loaded by the service itself:
 *   node --import tsx --import ./bench/count-statements.mjs …
 * Counts every SQL statement the native `libsql` driver runs (prepared statements' run/get/all/iterate, and exec),
 * by its text, with the time spent in the driver, in the main thread and in every worker thread (workers inherit the preload). On SIGUSR2 the main
 * thread gathers every thread's counts, writes them as JSON, with the CPU time of the process (every thread) since the last signal, to $STATEMENT_COUNT_FILE and starts counting afresh.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const Database = require('libsql');
/** Per SQL text: [statements run, milliseconds inside the driver]. */
const counts = new Map();
const timed = (sql, work) => {
  const started = performance.now();
  try {
    return work();
  } finally {
    const ms = performance.now() - started;
    // A COMMIT that took a millisecond or more synced the log (synchronous=FULL) on the thread that ran it.
    const key = sql === 'COMMIT' ? `COMMIT (${ms >= 1 ? 'a millisecond or more' : 'under a millisecond'})` : sql;
    const entry = counts.get(key) ?? [0, 0];
    entry[0] += 1;
    entry[1] += ms;
    counts.set(key, entry);
  }
};

const prepare = Database.prototype.prepare;
let patchedStatement = false;
Database.prototype.prepare = function (sql) {
  const statement = prepare.call(this, sql);
  statement.__sql = sql;
  if (!patchedStatement) {
    patchedStatement = true;
    const proto = Object.getPrototypeOf(statement);
    for (const name of ['run', 'get', 'all', 'iterate']) {
      const original = proto[name];
      proto[name] = function (...args) {
        return timed(this.__sql ?? '?', () => original.apply(this, args));
      };
    }
  }
  return statement;
};
const exec = Database.prototype.exec;
Database.prototype.exec = function (sql) {
  return timed(sql, () => exec.call(this, sql));
};

const channel = new BroadcastChannel('agentpost-statement-count');
channel.unref();
const take = () => {
  const out = Object.fromEntries(counts);
  counts.clear();
  return out;
};
if (isMainThread) {
  const gathered = [];
  channel.onmessage = (event) => {
    if (event.data?.kind === 'counts') gathered.push(event.data.counts);
  };
  let cpu = process.cpuUsage();
  process.on('SIGUSR2', () => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    gathered.length = 0;
    gathered.push(take());
    channel.postMessage({ kind: 'dump' });
    setTimeout(() => {
      const total = {};
      for (const part of gathered)
        for (const [sql, [n, ms]] of Object.entries(part)) {
          const entry = (total[sql] ??= [0, 0]);
          entry[0] += n;
          entry[1] += ms;
        }
      const cpuMs = (used.user + used.system) / 1000;
      writeFileSync(process.env.STATEMENT_COUNT_FILE ?? '/tmp/statement-count.json', JSON.stringify({ total, cpuMs }));
    }, 300);
  });
} else {
  channel.onmessage = (event) => {
    if (event.data?.kind === 'dump') channel.postMessage({ kind: 'counts', thread: threadId, counts: take() });
  };
}
