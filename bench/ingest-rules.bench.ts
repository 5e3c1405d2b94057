/**
 * SMTP ingest with administration on vs off, in the same run: 10 KB messages from Postfix's `smtp-source` (one
 * message per connection, 8 concurrent sessions) into two services side by side, each durable as in production (the
 * writer thread, synchronous=FULL before each 250):
 * - "with rules": the mailbox's workspace has 50 inbound rules (every operator over `from.*` and `recipient.*`, a third
 *   of them `in_list`), 3 lists of 10,000 items (a domain, a TLD and an address list), and a policy with limits (size,
 *   daily count, storage, attachments) and a matching rule that stars each message; so every message is evaluated at
 *   RCPT TO and in the inbox, and writes two rule-evaluation rows and its daily counter. With {@link AUTHENTICATOR}
 *   set, authentication runs too (DNS answered by an in-process resolver with no latency);
 * - "without": the same service with no rules, lists or policy.
 * The two take turns (BENCH_ROUNDS rounds, each "without" then "with"); the figures are the medians, and the ratio
 * is the median of each round's ratio. The goal is 80% or more.
 *
 * Needs `smtp-source` (Debian: `apt-get install postfix`). BENCH_MESSAGES sets the messages per run (default 2000),
 * BENCH_ROUNDS the rounds (default 5).
 */
import { loadavg } from 'node:os';
import { count, eq } from 'drizzle-orm';
import type { FullService } from '../server/main.js';
import { createAuthenticator, loadConfig, type DnsResolver } from '../src/index.js';
import type { Authenticator } from '../src/ports/index.js';
import { tables, type StoredRuleCondition } from '../storage/index.js';
import { fakeDns } from '../test/helpers/dns.js';
import { NO_SMTP_SOURCE, smtpSource, startMailService, which } from './load-tools.js';

/**
 * The authentication stage run with the rules (SPF, DKIM, DMARC, ARC through the in-process resolver), with the DNS
 * cache TTL a deployment has by default (`AGENTPOST_DNS_CACHE_TTL`), as the service builds it. The service "without"
 * runs no stage at all (`inboundStages: {}`), so the ratio prices rules, lists and authentication together.
 * BENCH_AUTH=off leaves authentication out of "with rules" too.
 */
const AUTHENTICATOR: ((dns: DnsResolver) => Authenticator) | undefined =
  process.env.BENCH_AUTH === 'off'
    ? undefined
    : (dns) =>
        createAuthenticator({
          dns,
          authservId: 'mx.rules-bench.agentpost.localhost',
          cacheTtlMs: loadConfig({}).dnsCacheTtlMs,
        });

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM_UP = 1000;
const SIZE = 10_240;
const SESSIONS = 8;
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'rules-bench.agentpost.localhost';
const RECIPIENT = `agent@${DOMAIN}`;
/** smtp-source's sender. */
const SENDER = 'sender@example.com';
const LIST_ITEMS = 10_000;
const RULES = 50;

const smtpSourceBinary = (): string | undefined => which('smtp-source');

/**
 * One measured run: messages per second, and the CPU time this process (all its threads; smtp-source is another
 * process) spent per message meanwhile, in ms. On a loaded machine the rate swings with the other work; the CPU per
 * message does much less, and the rate of a CPU-bound ingest follows its inverse.
 */
async function measured(binary: string, port: number): Promise<{ rate: number; cpuMs: number }> {
  const before = process.cpuUsage();
  const rate = await runSource(binary, port, MESSAGES);
  const used = process.cpuUsage(before);
  return { rate, cpuMs: (used.user + used.system) / 1000 / MESSAGES };
}

/** Runs smtp-source and returns the messages per second. */
async function runSource(binary: string, port: number, messages: number): Promise<number> {
  const seconds = await smtpSource(binary, {
    port,
    messages,
    sessions: SESSIONS,
    size: SIZE,
    from: SENDER,
    to: RECIPIENT,
  });
  return Math.round(messages / seconds);
}

/** 50 rules: none blocks this mail, one stars it; they cover every operator and field, and the three lists. */
function benchRules(listIds: { domain: string; tld: string; address: string }): {
  conditions: StoredRuleCondition[];
  actions: { type: 'mark_as_starred' | 'assign_to_folder' | 'block' | 'mark_as_read' | 'archive'; value?: string }[];
  matchOperator: 'all' | 'any';
}[] {
  const rules: ReturnType<typeof benchRules> = [];
  for (let index = 0; rules.length < RULES - 1; index++) {
    switch (index % 6) {
      case 0:
        rules.push({
          conditions: [{ field: 'from.domain', operator: 'in_list', value: [listIds.domain] }],
          actions: [{ type: 'block' }],
          matchOperator: 'all',
        });
        break;
      case 1:
        rules.push({
          conditions: [
            { field: 'from.tld', operator: 'in_list', value: [listIds.tld] },
            { field: 'recipient.address', operator: 'in_list', value: [listIds.address] },
          ],
          actions: [{ type: 'block' }],
          matchOperator: 'any',
        });
        break;
      case 2:
        rules.push({
          conditions: [{ field: 'from.address', operator: 'is', value: `vendor${index}@billing.example.net` }],
          actions: [{ type: 'assign_to_folder', value: 'Billing' }],
          matchOperator: 'all',
        });
        break;
      case 3:
        rules.push({
          conditions: [
            { field: 'from.address', operator: 'contains', value: `newsletter${index}` },
            { field: 'recipient.domain', operator: 'is', value: DOMAIN },
          ],
          actions: [{ type: 'archive' }],
          matchOperator: 'all',
        });
        break;
      case 4:
        rules.push({
          conditions: [
            { field: 'recipient.address', operator: 'is_not', value: RECIPIENT },
            { field: 'from.domain', operator: 'is', value: 'example.com' },
          ],
          actions: [{ type: 'mark_as_read' }],
          matchOperator: 'all',
        });
        break;
      default:
        rules.push({
          conditions: [{ field: 'from.domain', operator: 'contains', value: `promo${index}.` }],
          actions: [{ type: 'block' }],
          matchOperator: 'any',
        });
    }
  }
  rules.push({
    conditions: [{ field: 'from.address', operator: 'is', value: SENDER }],
    actions: [{ type: 'mark_as_starred' }],
    matchOperator: 'all',
  });
  return rules;
}

/** Writes the lists, rules and policy into the default workspace of the service's application. */
async function administer(service: FullService): Promise<void> {
  const db = service.core.deps.db;
  const at = Math.floor(Date.now() / 1000);
  const [workspace] = await db.orm.select().from(tables.workspaces).where(eq(tables.workspaces.isDefault, true));
  const applicationId = workspace!.applicationId;
  const listIds = { domain: 'bench_list_domain', tld: 'bench_list_tld', address: 'bench_list_address' };
  const itemOf = {
    domain: (n: number) => `blocked-${n}.example.org`,
    tld: (n: number) => `t${n}`,
    address: (n: number) => `someone${n}@elsewhere.example`,
  };
  for (const type of ['domain', 'tld', 'address'] as const) {
    await db.write((tx) =>
      tx.insert(tables.lists).values({
        id: listIds[type],
        applicationId,
        name: type,
        type,
        itemsCount: LIST_ITEMS,
        version: 1,
        createdAt: at,
        updatedAt: at,
      }),
    );
    for (let start = 0; start < LIST_ITEMS; start += 1000) {
      const items = Array.from({ length: 1000 }, (_, offset) => ({
        id: `${listIds[type]}_${start + offset}`,
        listId: listIds[type],
        value: itemOf[type](start + offset),
        createdAt: at,
      }));
      await db.write((tx) => tx.insert(tables.listItems).values(items));
    }
  }
  const ruleIds = benchRules(listIds).map((_, index) => `bench_rule_${index}`);
  await db.write((tx) =>
    tx.insert(tables.rules).values(
      benchRules(listIds).map((rule, index) => ({
        id: ruleIds[index]!,
        applicationId,
        name: `rule ${index}`,
        priority: index,
        ...rule,
        createdAt: at,
        updatedAt: at,
      })),
    ),
  );
  await db.write((tx) =>
    tx.insert(tables.policies).values({
      id: 'bench_policy',
      applicationId,
      name: 'bench',
      limits: {
        limit_size_total_mime: 10 * 1024 * 1024,
        limit_count_daily_message_received: 100_000_000,
        limit_storage_total: 1024 ** 4,
        limit_attachment_size_limit: 5 * 1024 * 1024,
        limit_attachment_count_limit: 10,
        limit_attachment_allowed_types: ['application/pdf', 'image/*'],
      },
      createdAt: at,
      updatedAt: at,
    }),
  );
  await db.write((tx) =>
    tx
      .update(tables.workspaces)
      .set({ ruleIds, policyId: 'bench_policy' })
      .where(eq(tables.workspaces.id, workspace!.id)),
  );
  service.core.admin.enforcement.invalidate();
}

/** A service with its mailbox, administered or not, warmed up. */
async function startOne(binary: string, administered: boolean) {
  const dns = fakeDns();
  // The sender publishes SPF and DMARC, as senders that reach inboxes do: authentication gets answers, not misses.
  dns.txt.set('example.com', [['v=spf1 ip4:127.0.0.1 -all']]);
  dns.txt.set('_dmarc.example.com', [['v=DMARC1; p=none']]);
  const authenticator = administered && AUTHENTICATOR ? AUTHENTICATOR(dns) : undefined;
  const { service, close } = await startMailService({
    apiKey: API_KEY,
    domain: DOMAIN,
    recipient: RECIPIENT,
    deps: { dns, inboundStages: authenticator ? { authenticator } : {} },
    prepare: async (started) => {
      if (administered) await administer(started);
      await runSource(binary, started.smtpPort, WARM_UP);
    },
  });
  const tally = async (table: typeof tables.messages | typeof tables.ruleEvaluations) =>
    (await service.core.deps.db.orm.select({ n: count() }).from(table))[0]!.n;
  return {
    port: service.smtpPort,
    async counts() {
      await service.core.mail.inbound.flushEvaluations();
      const starred = (
        await service.core.deps.db.orm
          .select({ n: count() })
          .from(tables.messages)
          .where(eq(tables.messages.starred, true))
      )[0]!.n;
      return { messages: await tally(tables.messages), evaluations: await tally(tables.ruleEvaluations), starred };
    },
    close,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs the benchmark; figures are printed by bench/run.ts. */
export async function run(): Promise<Record<string, number | string>> {
  const binary = smtpSourceBinary();
  if (!binary) return { skipped: NO_SMTP_SOURCE };
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(' ');
  const out: Record<string, number | string> = {
    messages: MESSAGES,
    'message size (bytes)': SIZE,
    sessions: SESSIONS,
    'with rules': `${RULES} inbound rules, 3 lists of ${LIST_ITEMS} items, a policy with limits, authentication ${AUTHENTICATOR ? 'on' : 'off (no authenticator set)'}`,
    'load average at start (1/5/15 min)': load(),
  };
  const plain = await startOne(binary, false);
  const ruled = await startOne(binary, true).catch(async (error: unknown) => {
    await plain.close();
    throw error;
  });
  try {
    const without: { rate: number; cpuMs: number }[] = [];
    const withRules: { rate: number; cpuMs: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      without.push(await measured(binary, plain.port));
      withRules.push(await measured(binary, ruled.port));
    }
    const percent = (values: number[]) =>
      `${values.map((value) => `${Math.round(value)}%`).join(' / ')} / ${Math.round(median(values))}%`;
    const round2 = (value: number) => Math.round(value * 100) / 100;
    out['without rules (msg/s, each round)'] = without.map((run) => run.rate).join(' / ');
    out['with rules (msg/s, each round)'] = withRules.map((run) => run.rate).join(' / ');
    out['without rules (msg/s, median)'] = median(without.map((run) => run.rate));
    out['with rules (msg/s, median)'] = median(withRules.map((run) => run.rate));
    out['ratio with / without (each round / median; goal >= 80%)'] = percent(
      withRules.map((run, index) => (100 * run.rate) / without[index]!.rate),
    );
    out['CPU without rules (ms/msg, this process, median)'] = round2(median(without.map((run) => run.cpuMs)));
    out['CPU with rules (ms/msg, this process, median)'] = round2(median(withRules.map((run) => run.cpuMs)));
    out['CPU ratio without / with (each round / median: the rate ratio when CPU-bound)'] = percent(
      withRules.map((run, index) => (100 * without[index]!.cpuMs) / run.cpuMs),
    );
    const expected = WARM_UP + ROUNDS * MESSAGES;
    const plainCounts = await plain.counts();
    const ruledCounts = await ruled.counts();
    out['stored without / with rules (expected each)'] =
      `${plainCounts.messages} / ${ruledCounts.messages} (${expected})`;
    out['rule evaluations recorded without / with rules'] =
      `${plainCounts.evaluations} / ${ruledCounts.evaluations} (two per message with rules)`;
    out['starred by the matching rule (with rules)'] = ruledCounts.starred;
  } finally {
    await Promise.all([plain.close(), ruled.close()]);
  }
  out['load average at end (1/5/15 min)'] = load();
  return out;
}
