import Sqlite from 'libsql';
import { copyFileSync, rmSync } from 'node:fs';
import { createService } from '../server/main.js';
import { loadConfig } from '../src/index.js';
const D = '/tmp/agentpost-bench-reads-v1';
for (const s of ['', '-wal', '-shm']) rmSync(`${D}/prof-scratch.db${s}`, { force: true });
copyFileSync(`${D}/mailbox-200.db`, `${D}/prof-scratch.db`);
const gid = (new Sqlite(`${D}/prof-scratch.db`).prepare("select id from grants where email='short@bench.agentpost.localhost'").raw(true).get() as string[])[0];
const service = await createService(loadConfig({ AGENTPOST_DATABASE_URL: `file:${D}/prof-scratch.db`, AGENTPOST_HTTP_PORT: '0', AGENTPOST_SMTP_PORT: '0', AGENTPOST_API_KEY: 'agp_bench_key_for_the_default_application', AGENTPOST_LOG_LEVEL: 'silent', AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_RATE_LIMIT_GRANT: '0', AGENTPOST_ROLES: 'http' }));
const headers = { authorization: 'Bearer agp_bench_key_for_the_default_application' };
const paths = (process.env.PATHS ?? '/livez,/v3/grants/GID,/v3/grants/GID/messages?limit=50').split(',').map((p) => p.replace('GID', gid!));
const N = Number(process.env.N ?? 20000);
for (const path of paths) {
  const url = `http://127.0.0.1${path}`;
  const one = async () => { const r = await service.app.fetch(new Request(url, { headers })); if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`); await r.arrayBuffer(); };
  for (let i = 0; i < 2000; i++) await one();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < N; i++) await one();
  const c1 = process.cpuUsage(c0);
  console.log(path.padEnd(60), 'cpu µs/req', ((c1.user + c1.system) / N).toFixed(1), 'wall', ((performance.now() - t0) * 1000 / N).toFixed(1));
}
await new Promise((r) => setTimeout(r, 100));
for (const [k, v] of (globalThis as any).ZZ) if (v.n > 100) console.log('ZZ', v.n, (Number(v.ns) / v.n / 1000).toFixed(1), 'us', k.slice(0, 400));
{
  const run = (globalThis as any).ZZRUN;
  const sqlText = 'select "id", "application_id", "name", "prefix", "key_hash", "created_at", "revoked_at" from "api_keys" where "api_keys"."key_hash" = ? limit ?';
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256').update('agp_bench_key_for_the_default_application').digest('hex');
  console.log(run(sqlText, [hash, 1]).length, run(sqlText, ['x', 1]).length);
  for (const h of [hash]) { const t = process.hrtime.bigint(); for (let i = 0; i < 20000; i++) run(sqlText, [h, 1]); console.log('tight apikey', Number(process.hrtime.bigint() - t) / 20000 / 1000, 'us'); }
  const k = 'select "id", "rev", "date", "seq" from "messages" where ("messages"."grant_id" = ? and NOT EXISTS (SELECT 1 FROM "draft_details" WHERE "draft_details"."message_id" = "messages"."id")) order by "messages"."date" desc, "messages"."seq" desc limit ?';
  { const t = process.hrtime.bigint(); for (let i = 0; i < 20000; i++) run(k, [gid, 51]); console.log('tight keys', Number(process.hrtime.bigint() - t) / 20000 / 1000, 'us'); }
}
