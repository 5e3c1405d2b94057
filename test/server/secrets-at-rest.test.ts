/**
 * Secrets at rest, through the real service on one libSQL file restarted several times: the key file made on a fresh
 * installation (mode 0600, announced once), DKIM private keys, webhook secrets and the tracking signing key stored
 * sealed, values stored in clear by an older installation sealed at start-up, a rotation to a new key, and the
 * starts that must fail (the key missing, or another) with a message that names the setting to fix.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MessageFields } from 'nylas';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, tables } from '../../storage/index.js';
import {
  ConfigError,
  createSecretBox,
  loadConfig,
  resolveSecretKey,
  verifyWebhookSignature,
  type Logger,
  type SecretBox,
} from '../../src/index.js';
import { createService } from '../../server/main.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { BIN, ROOT, childEnv } from '../helpers/process.js';
import { startTestService, tempDir, testConfig, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const SENDER_DOMAIN = 'signer.agentpost.localhost';
const SENDER = `agent@${SENDER_DOMAIN}`;
const RECEIVER = 'agent@reader.agentpost.localhost';
const KEY_B = 'the-operators-own-secret-key-after-rotation-0001';
const KEY_C = 'a-third-secret-key-this-database-never-saw-00001';

/** A logger that keeps what was logged. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The rejection of a start, as an error. */
async function startFailure(databaseUrl: string, env: Record<string, string> = {}): Promise<Error> {
  const started = await createService(testConfig(databaseUrl, env)).then(
    async (service) => {
      await service.close();
      return undefined;
    },
    (error: unknown) => error as Error,
  );
  if (!started) throw new Error('the service started');
  return started;
}

describe('secrets at rest across restarts of one database', { timeout: 60_000 }, () => {
  const dir = tempDir('agentpost-secrets-');
  const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
  const keyFile = join(dir.path, 'agentpost.key');
  let receiver: WebhookReceiver;
  let webhookId: string;
  let webhookSecret: string;
  let deliveries = 0;
  let grants = 0;
  /** The tracking signing key as first made (it must survive every step). */
  let signingKey: string;
  /** The DKIM-signing sender's and the receiver's mailboxes (made before the webhook, which announces new grants). */
  let senderGrant: string;
  let receiverGrant: string;

  /** Stored values of the secret columns, as they are in the database file. */
  async function storedSecrets(service: TestService) {
    const { orm } = service.core.deps.db;
    const [webhook] = await orm
      .select({ secret: tables.webhooks.secret })
      .from(tables.webhooks)
      .where(eq(tables.webhooks.id, webhookId));
    const [domain] = await orm
      .select({ pem: tables.domains.dkimPrivateKeyPem })
      .from(tables.domains)
      .where(eq(tables.domains.domainAddress, SENDER_DOMAIN));
    const keys = await orm.select().from(tables.serviceKeys);
    return {
      webhook: webhook!.secret,
      dkim: domain!.pem!,
      signing: keys.find((row) => row.name === 'deliverability-signing')!.value,
      check: keys.find((row) => row.name === 'secret-key-check')?.value,
    };
  }

  /** Every secret column holds a value sealed with `box`'s current key, and opens to what it was. */
  async function expectSealedWith(service: TestService, box: SecretBox) {
    const stored = await storedSecrets(service);
    for (const value of [stored.webhook, stored.dkim, stored.signing, stored.check!]) {
      expect(value).toMatch(new RegExp(`^agps1\\.${box.keyId}\\.`));
      expect(box.isCurrent(value)).toBe(true);
    }
    expect(box.open(stored.webhook)).toBe(webhookSecret);
    expect(box.open(stored.dkim)).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(box.open(stored.signing)).toBe(signingKey);
  }

  /** A new grant is announced to the webhook with a signature made with the secret returned on creation. */
  async function expectSignedDelivery(service: TestService) {
    grants += 1;
    await service.nylas.auth.customAuthentication({
      requestBody: { provider: 'nylas', settings: { email: `hooked${grants}@hooks.agentpost.localhost` } } as never,
    });
    deliveries += 1;
    const delivery = (await receiver.waitForDeliveries(deliveries))[deliveries - 1]!;
    expect(delivery.json).toMatchObject({
      type: 'grant.created',
      data: { object: { email: `hooked${grants}@hooks.agentpost.localhost` } },
    });
    expect(delivery.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhookSecret).update(delivery.body).digest('hex'),
    );
    expect(
      verifyWebhookSignature({ secret: webhookSecret, body: delivery.body, headers: delivery.headers, now: new Date() })
        .valid,
    ).toBe(true);
  }

  /** A message sent from the DKIM domain arrives signed with its key, and the signature passes. */
  async function expectDkimSigned(service: TestService) {
    const domains = await request(service.url, 'GET', '/v3/admin/domains', { key: service.apiKey });
    const domainId = (domains.body.data as { id: string; domain_address: string }[]).find(
      (domain) => domain.domain_address === SENDER_DOMAIN,
    )!.id;
    const info = await request(service.url, 'POST', `/v3/admin/domains/${domainId}/info`, {
      key: service.apiKey,
      body: { type: 'dkim' },
    });
    const record = info.body.data.attempt.options as { host: string; value: string };
    service.dns.txt.set(record.host, [[record.value]]);
    const subject = `Signed ${grants}-${Date.now()}`;
    await service.nylas.messages.send({
      identifier: senderGrant,
      requestBody: { to: [{ email: RECEIVER }], subject, body: 'The body that DKIM covers.' },
    });
    const signed = await eventually(async () => {
      const listed = await service.nylas.messages.list({
        identifier: receiverGrant,
        queryParams: { fields: MessageFields.RAW_MIME, subject },
      });
      const raw = listed.data[0]?.rawMime;
      return raw ? Buffer.from(raw, 'base64url') : undefined;
    });
    expect(signed.toString()).toMatch(/^DKIM-Signature: [^]*?\bd=signer\.agentpost\.localhost;/);
    const verdict = await service.core.mail.stages.authenticator({
      raw: signed,
      mailFrom: SENDER,
      client: { address: '203.0.113.7', helo: `mail.${SENDER_DOMAIN}` },
    });
    expect(verdict.dkim).toEqual([{ result: 'pass', domain: SENDER_DOMAIN, selector: 'agentpost' }]);
  }

  const start = (env: Record<string, string> = {}, logger?: Logger) =>
    startTestService({
      databaseUrl,
      env: { AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true', AGENTPOST_WORKER_POLL_MS: '50', ...env },
      ...(logger ? { deps: { logger } } : {}),
    });

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    dir.remove();
  });

  it('on a fresh installation without AGENTPOST_SECRET_KEY, makes a key file beside the database (mode 0600), says so once, and stores secrets sealed with it', async () => {
    const logger = recordingLogger();
    const service = await start({}, logger);
    try {
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readFileSync(keyFile, 'utf8').trim();
      expect(key.length).toBeGreaterThanOrEqual(32);
      const announced = logger.lines.filter((line) => line.message.startsWith('made a new secret key'));
      expect(announced).toEqual([
        { level: 'info', message: expect.stringContaining('back it up with the database'), fields: { path: keyFile } },
      ]);

      senderGrant = await createMailbox(service, SENDER);
      receiverGrant = await createMailbox(service, RECEIVER);
      const domain = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'Hooks', domain_address: 'hooks.agentpost.localhost' },
      });
      expect(domain.status).toBe(200);
      const { data: webhook } = await service.nylas.webhooks.create({
        requestBody: { triggerTypes: ['grant.created'] as never, webhookUrl: receiver.url },
      });
      webhookId = webhook.id;
      webhookSecret = webhook.webhookSecret;
      expect(webhookSecret).toMatch(/^whsec_/);
      await expectDkimSigned(service);
      await expectSignedDelivery(service);
      const box = createSecretBox(key);
      signingKey = box.open((await storedSecrets(service)).signing);
      expect(Buffer.from(signingKey, 'base64')).toHaveLength(32);
      await expectSealedWith(service, box);
      // Nothing of the secrets is in the database files in clear.
      for (const name of ['agentpost.db', 'agentpost.db-wal']) {
        const path = join(dir.path, name);
        if (!existsSync(path)) continue;
        const file = readFileSync(path);
        expect(file.includes(webhookSecret)).toBe(false);
        expect(file.includes('BEGIN PRIVATE KEY')).toBe(false);
      }
    } finally {
      await service.close();
    }
  });

  it('starts again with the key file, without a new key or a second announcement', async () => {
    const key = readFileSync(keyFile, 'utf8');
    const logger = recordingLogger();
    const service = await start({}, logger);
    try {
      expect(readFileSync(keyFile, 'utf8')).toBe(key);
      expect(logger.lines.filter((line) => line.message.startsWith('made a new secret key'))).toEqual([]);
      await expectSignedDelivery(service);
      await expectSealedWith(service, createSecretBox(key.trim()));
    } finally {
      await service.close();
    }
  });

  it('refuses to start when the key is another or missing, naming the setting, and makes no new key file', async () => {
    const otherVariable = await startFailure(databaseUrl, { AGENTPOST_SECRET_KEY: KEY_C });
    expect(otherVariable).toBeInstanceOf(ConfigError);
    expect(otherVariable.message).toMatch(
      /^The secret key is not the one this database's secrets were sealed with: AGENTPOST_SECRET_KEY gives key [0-9a-f]{16}/,
    );
    expect(otherVariable.message).toContain('AGENTPOST_PREVIOUS_SECRET_KEYS');

    const key = readFileSync(keyFile, 'utf8');
    writeFileSync(keyFile, `${KEY_C}\n`, { mode: 0o600 });
    const otherFile = await startFailure(databaseUrl);
    expect(otherFile.message).toContain(`the key file ${keyFile} (AGENTPOST_SECRET_KEY is unset)`);

    rmSync(keyFile);
    const missing = await startFailure(databaseUrl);
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.message).toBe(
      `This database holds secrets sealed at rest, but their key is missing: AGENTPOST_SECRET_KEY is unset and the key file ${keyFile} does not exist. ` +
        'Restore the key file from the backup taken with the database (or set AGENTPOST_SECRET_KEY_FILE to where it is, or AGENTPOST_SECRET_KEY to the key); a new key could not open the secrets already stored.',
    );
    expect(existsSync(keyFile)).toBe(false);
    // Without its check value too: the sealed values alone say the database holds secrets.
    const db = await createDb({ url: databaseUrl });
    try {
      await db.write((tx) => tx.delete(tables.serviceKeys).where(eq(tables.serviceKeys.name, 'secret-key-check')));
    } finally {
      await db.close();
    }
    expect((await startFailure(databaseUrl)).message).toBe(missing.message);
    expect(existsSync(keyFile)).toBe(false);

    // The command: exit 1 with the message, nothing started.
    const served = await promisify(execFile)(process.execPath, [BIN, 'serve'], {
      cwd: ROOT,
      env: childEnv({ AGENTPOST_DATABASE_URL: databaseUrl, AGENTPOST_HTTP_PORT: '0', AGENTPOST_SMTP_PORT: '0' }),
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(
      'agentpost: This database holds secrets sealed at rest, but their key is missing: AGENTPOST_SECRET_KEY is unset',
    );
    expect(existsSync(keyFile)).toBe(false);
    writeFileSync(keyFile, key, { mode: 0o600 });
  });

  it('seals, at start-up, secrets an older installation stored in clear (and then makes its key file)', async () => {
    // As before secrets were sealed: clear values, no check value, no key file.
    const old = createSecretBox(readFileSync(keyFile, 'utf8').trim());
    const db = await createDb({ url: databaseUrl });
    try {
      const [domain] = await db.orm
        .select()
        .from(tables.domains)
        .where(eq(tables.domains.domainAddress, SENDER_DOMAIN));
      const [signing] = await db.orm
        .select()
        .from(tables.serviceKeys)
        .where(eq(tables.serviceKeys.name, 'deliverability-signing'));
      await db.write(async (tx) => {
        await tx.update(tables.webhooks).set({ secret: webhookSecret }).where(eq(tables.webhooks.id, webhookId));
        await tx
          .update(tables.domains)
          .set({ dkimPrivateKeyPem: old.open(domain!.dkimPrivateKeyPem!) })
          .where(eq(tables.domains.id, domain!.id));
        await tx
          .update(tables.serviceKeys)
          .set({ value: old.open(signing!.value) })
          .where(eq(tables.serviceKeys.name, 'deliverability-signing'));
        await tx.delete(tables.serviceKeys).where(eq(tables.serviceKeys.name, 'secret-key-check'));
      });
    } finally {
      await db.close();
    }
    rmSync(keyFile);

    const logger = recordingLogger();
    const service = await start({}, logger);
    try {
      const key = readFileSync(keyFile, 'utf8').trim();
      expect(createSecretBox(key).keyId).not.toBe(old.keyId);
      expect(logger.lines).toContainEqual({
        level: 'info',
        message: 'sealed stored secrets with the current secret key',
        fields: { values: 3 },
      });
      await expectSealedWith(service, createSecretBox(key));
      await expectSignedDelivery(service);
      await expectDkimSigned(service);
    } finally {
      await service.close();
    }
  });

  it('rotates to AGENTPOST_SECRET_KEY with the old key in AGENTPOST_PREVIOUS_SECRET_KEYS: everything is sealed again, webhooks and DKIM still sign', async () => {
    const fileKey = readFileSync(keyFile, 'utf8').trim();
    const service = await start({ AGENTPOST_SECRET_KEY: KEY_B, AGENTPOST_PREVIOUS_SECRET_KEYS: fileKey });
    try {
      const box = createSecretBox(KEY_B);
      await expectSealedWith(service, box);
      // The previous key opens none of it any more.
      const { webhook } = await storedSecrets(service);
      expect(() => createSecretBox(fileKey).open(webhook)).toThrow(/does not hold/);
      await expectSignedDelivery(service);
      await expectDkimSigned(service);
    } finally {
      await service.close();
    }
    // After one start, the previous key can go.
    const after = await start({ AGENTPOST_SECRET_KEY: KEY_B });
    try {
      await expectSignedDelivery(after);
      // A secret made now is sealed with the new key, and returned in clear once.
      const { data: rotated } = await after.nylas.webhooks.rotateSecret({ webhookId });
      webhookSecret = rotated.webhookSecret;
      await expectSealedWith(after, createSecretBox(KEY_B));
      await expectSignedDelivery(after);
    } finally {
      await after.close();
    }
    // The key file left from before the rotation is another key now.
    expect((await startFailure(databaseUrl)).message).toContain(
      `the key file ${keyFile} (AGENTPOST_SECRET_KEY is unset)`,
    );
  });
});

describe('where the key comes from', () => {
  it('AGENTPOST_SECRET_KEY_FILE names the key file; a given AGENTPOST_SECRET_KEY makes none', async () => {
    const dir = tempDir('agentpost-keyfile-');
    try {
      const elsewhere = join(dir.path, 'keys', 'agentpost.key');
      const named = await startTestService({
        databaseUrl: `file:${join(dir.path, 'one.db')}`,
        env: { AGENTPOST_SECRET_KEY_FILE: elsewhere },
      });
      await named.close();
      expect(statSync(elsewhere).mode & 0o777).toBe(0o600);
      expect(existsSync(join(dir.path, 'agentpost.key'))).toBe(false);

      const given = await startTestService({
        databaseUrl: `file:${join(dir.path, 'two.db')}`,
        env: { AGENTPOST_SECRET_KEY: KEY_B },
      });
      await given.close();
      expect(existsSync(join(dir.path, 'agentpost.key'))).toBe(false);
    } finally {
      dir.remove();
    }
  });

  it('a libSQL server database needs AGENTPOST_SECRET_KEY (or a key file named)', async () => {
    const config = loadConfig({ AGENTPOST_DATABASE_URL: 'http://127.0.0.1:1', AGENTPOST_LOG_LEVEL: 'silent' });
    const db = { file: undefined } as never;
    const logger = recordingLogger();
    await expect(resolveSecretKey({ db, config, logger })).rejects.toThrow(
      /^AGENTPOST_SECRET_KEY: required with a libSQL server database/,
    );
    const given = loadConfig({
      AGENTPOST_DATABASE_URL: 'http://127.0.0.1:1',
      AGENTPOST_SECRET_KEY: KEY_B,
      AGENTPOST_PREVIOUS_SECRET_KEYS: ` ${KEY_C} , `,
    });
    expect(await resolveSecretKey({ db, config: given, logger })).toEqual({
      key: KEY_B,
      previousKeys: [KEY_C],
      origin: { kind: 'variable' },
    });
  });

  it('refuses short keys, naming the variable', () => {
    expect(() => loadConfig({ AGENTPOST_SECRET_KEY: 'too-short' })).toThrow(
      /AGENTPOST_SECRET_KEY: must be at least 32 characters/,
    );
    expect(() => loadConfig({ AGENTPOST_SECRET_KEY: KEY_B, AGENTPOST_PREVIOUS_SECRET_KEYS: `${KEY_C},short` })).toThrow(
      /AGENTPOST_PREVIOUS_SECRET_KEYS: entry 2 is shorter than 32 characters/,
    );
  });

  it('refuses a key file that is too short, naming the file', async () => {
    const dir = tempDir('agentpost-keyfile-');
    try {
      writeFileSync(join(dir.path, 'agentpost.key'), 'short\n', { mode: 0o600 });
      const failure = await startFailure(`file:${join(dir.path, 'agentpost.db')}`);
      expect(failure.message).toBe(
        `The secret key file ${join(dir.path, 'agentpost.key')} (AGENTPOST_SECRET_KEY_FILE) holds 5 characters; a key has at least 32.`,
      );
    } finally {
      dir.remove();
    }
  });
});
