import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseRoles } from '../../src/config.js';

/** The error message `loadConfig` throws for an environment, or a failure when it does not throw. */
function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: 'file:./data/agentpost.db',
      databaseAuthToken: undefined,
      host: '127.0.0.1',
      httpPort: 3000,
      smtpPort: 2525,
      publicUrl: 'http://127.0.0.1:3000',
      apiKey: undefined,
      domains: [],
      smtpRelay: undefined,
      logLevel: 'info',
      allowPrivateNetworks: false,
      smtpMaxConnections: 10_000,
      smtpMaxConnectionsPerClient: 20,
      smtpMaxUnknownRecipients: 3,
      smtpMaxUnknownRecipientsPerClient: 30,
    });
    expect(config.imap.fetchThread).toBe('auto');
    expect(loadConfig({ AGENTPOST_IMAP_FETCH_THREAD: 'off' }).imap.fetchThread).toBe('off');
  });

  it('reads AGENTPOST_WARMUP_SCHEDULE (day 1 first, or off) and names it when a cap is bad', () => {
    expect(loadConfig({}).deliverability.warmUpSchedule).toHaveLength(28);
    expect((loadConfig({}).deliverability.warmUpSchedule as number[]).slice(0, 4)).toEqual([50, 50, 50, 100]);
    expect(loadConfig({ AGENTPOST_WARMUP_SCHEDULE: ' 20, 40 ,80' }).deliverability.warmUpSchedule).toEqual([
      20, 40, 80,
    ]);
    expect(loadConfig({ AGENTPOST_WARMUP_SCHEDULE: 'OFF' }).deliverability.warmUpSchedule).toBe('off');
    for (const bad of ['50,abc', '50,,100', '0,10', '-5', '1.5', 'on']) {
      expect(configError({ AGENTPOST_WARMUP_SCHEDULE: bad })).toMatch(
        /AGENTPOST_WARMUP_SCHEDULE: ".*" is not a daily cap/,
      );
    }
    expect(configError({ AGENTPOST_WARMUP_SCHEDULE: Array(367).fill('5').join(',') })).toContain(
      'AGENTPOST_WARMUP_SCHEDULE: gives 367 days; a ramp has at most 366',
    );
  });

  it('applies the grant pause thresholds to domains unless AGENTPOST_DOMAIN_PAUSE_* are set', () => {
    expect(
      loadConfig({ AGENTPOST_PAUSE_BOUNCE_RATE: '0.1', AGENTPOST_PAUSE_MIN_SENT: '20' }).deliverability.domain,
    ).toEqual({ pauseBounceRate: 0.1, pauseComplaintRate: 0.001, pauseMinSent: 20, pauseWindowDays: 7 });
    const own = loadConfig({
      AGENTPOST_PAUSE_BOUNCE_RATE: '0.1',
      AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: '0.02',
      AGENTPOST_DOMAIN_PAUSE_COMPLAINT_RATE: '0.005',
      AGENTPOST_DOMAIN_PAUSE_MIN_SENT: '500',
    });
    expect(own.deliverability.domain).toMatchObject({
      pauseBounceRate: 0.02,
      pauseComplaintRate: 0.005,
      pauseMinSent: 500,
    });
    expect(own.deliverability.pauseBounceRate).toBe(0.1);
    expect(configError({ AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: '5%' })).toContain(
      'AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: must be a rate from 0 to 1',
    );
    expect(configError({ AGENTPOST_DOMAIN_PAUSE_MIN_SENT: '0' })).toContain(
      'AGENTPOST_DOMAIN_PAUSE_MIN_SENT: must be between 1 and',
    );
  });

  it('caps additional calendars per plan, AGENTPOST_MAX_CALENDARS giving the default of both', () => {
    expect(loadConfig({}).maxCalendars).toEqual({ trial: 10, production: 100 });
    expect(loadConfig({ AGENTPOST_MAX_CALENDARS: '4' }).maxCalendars).toEqual({ trial: 4, production: 4 });
    expect(
      loadConfig({
        AGENTPOST_MAX_CALENDARS: '4',
        AGENTPOST_MAX_CALENDARS_TRIAL: '1',
        AGENTPOST_MAX_CALENDARS_PRODUCTION: '30',
      }).maxCalendars,
    ).toEqual({ trial: 1, production: 30 });
    expect(configError({ AGENTPOST_MAX_CALENDARS_TRIAL: 'many' })).toContain(
      'AGENTPOST_MAX_CALENDARS_TRIAL: must be a whole number of calendars',
    );
  });

  it('ignores variables that are not ours and treats empty values as unset', () => {
    const config = loadConfig({ PATH: '/usr/bin', HOME: '/root', AGENTPOST_HTTP_PORT: '', AGENTPOST_DOMAINS: '' });
    expect(config.httpPort).toBe(3000);
    expect(config.domains).toEqual([]);
  });

  it('reads every contract variable', () => {
    const config = loadConfig({
      AGENTPOST_DATABASE_URL: 'libsql://db.example.com',
      AGENTPOST_HOST: '0.0.0.0',
      AGENTPOST_HTTP_PORT: '8080',
      AGENTPOST_SMTP_PORT: '25',
      AGENTPOST_PUBLIC_URL: 'https://mail.example.com/',
      AGENTPOST_API_KEY: 'a-fixed-key-of-enough-length',
      AGENTPOST_DOMAINS: ' Agents.Example.com , mail.example.org,',
      AGENTPOST_SMTP_RELAY: 'smtp://user:pass@relay.example.com:587',
    });
    expect(config).toMatchObject({
      databaseUrl: 'libsql://db.example.com',
      host: '0.0.0.0',
      httpPort: 8080,
      smtpPort: 25,
      publicUrl: 'https://mail.example.com',
      apiKey: 'a-fixed-key-of-enough-length',
      domains: ['agents.example.com', 'mail.example.org'],
      smtpRelay: 'smtp://user:pass@relay.example.com:587',
    });
  });

  it('accepts each kind of database URL', () => {
    for (const url of [
      'file:./data/x.db',
      'file:/tmp/a.db',
      'libsql://db.turso.io',
      'http://127.0.0.1:8080',
      'https://db.example.com',
      'ws://127.0.0.1:8080',
    ]) {
      expect(loadConfig({ AGENTPOST_DATABASE_URL: url }).databaseUrl).toBe(url);
    }
  });

  it('derives AGENTPOST_PUBLIC_URL from the host and HTTP port when unset', () => {
    expect(loadConfig({ AGENTPOST_HOST: 'localhost', AGENTPOST_HTTP_PORT: '4000' }).publicUrl).toBe(
      'http://localhost:4000',
    );
    expect(loadConfig({ AGENTPOST_HOST: '::1', AGENTPOST_HTTP_PORT: '4000' }).publicUrl).toBe('http://[::1]:4000');
    expect(
      loadConfig({ AGENTPOST_HTTP_PORT: '4000', AGENTPOST_PUBLIC_URL: 'https://agents.example.com' }).publicUrl,
    ).toBe('https://agents.example.com');
  });

  it.each([
    ['AGENTPOST_HTTP_PORT', 'abc', 'must be a whole number'],
    ['AGENTPOST_HTTP_PORT', '70000', 'between 0 and 65535'],
    ['AGENTPOST_SMTP_PORT', '-1', 'must be a whole number'],
    ['AGENTPOST_DATABASE_URL', 'postgres://localhost/agentpost', 'must start with file:'],
    ['AGENTPOST_DATABASE_URL', './data/agentpost.db', 'must start with file:'],
    ['AGENTPOST_PUBLIC_URL', 'ftp://example.com', 'http(s) URL'],
    ['AGENTPOST_PUBLIC_URL', 'not a url', 'http(s) URL'],
    ['AGENTPOST_API_KEY', 'short', 'at least 16 characters'],
    ['AGENTPOST_SMTP_RELAY', 'http://relay.example.com', 'smtp://'],
    ['AGENTPOST_LOG_LEVEL', 'loud', 'AGENTPOST_LOG_LEVEL'],
    ['AGENTPOST_HOST', 'bad host', 'host name or IP'],
    ['AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS', '0', 'between 1 and 1000'],
    ['AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT', 'many', 'whole number'],
    ['AGENTPOST_ALLOW_PRIVATE_NETWORKS', 'maybe', 'AGENTPOST_ALLOW_PRIVATE_NETWORKS'],
  ])('rejects %s=%s with a message naming the variable', (name, value, why) => {
    const message = configError({ [name]: value });
    expect(message).toContain(`${name}:`);
    expect(message).toContain(why);
  });

  it('reads the SMTP limits', () => {
    const config = loadConfig({
      AGENTPOST_SMTP_MAX_CONNECTIONS: '500',
      AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '5',
      AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS: '10',
      AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT: '200',
    });
    expect(config).toMatchObject({
      smtpMaxConnections: 500,
      smtpMaxConnectionsPerClient: 5,
      smtpMaxUnknownRecipients: 10,
      smtpMaxUnknownRecipientsPerClient: 200,
    });
  });

  it('lifts the address policy with AGENTPOST_ALLOW_PRIVATE_NETWORKS or its earlier name AGENTPOST_ALLOW_PRIVATE_WEBHOOKS', () => {
    expect(loadConfig({ AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true' }).allowPrivateNetworks).toBe(true);
    expect(loadConfig({ AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' }).allowPrivateNetworks).toBe(true);
    expect(loadConfig({ AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: '1' }).allowPrivateNetworks).toBe(true);
    // The new name wins when both are set.
    expect(
      loadConfig({ AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'false', AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' })
        .allowPrivateNetworks,
    ).toBe(false);
  });

  it('names a bad AGENTPOST_DOMAINS entry and its value', () => {
    const message = configError({ AGENTPOST_DOMAINS: 'good.example.com,bad_domain,also good' });
    expect(message).toContain('AGENTPOST_DOMAINS:');
    expect(message).toContain('"bad_domain"');
    expect(message).toContain('"also good"');
    expect(message).not.toContain('"good.example.com"');
  });

  it('reads the spam stage settings: DNSBL zones, rspamd URL and deadline', () => {
    expect(loadConfig({}).spam).toEqual({
      dnsblZones: ['zen.spamhaus.org', 'bl.spamcop.net'],
      rspamdUrl: undefined,
      rspamdTimeoutMs: 10_000,
    });
    const config = loadConfig({
      AGENTPOST_DNSBL_ZONES: 'DNSBL.Example.org, other.example',
      AGENTPOST_RSPAMD_URL: 'http://127.0.0.1:11333/',
      AGENTPOST_RSPAMD_TIMEOUT: '3s',
    });
    expect(config.spam).toEqual({
      dnsblZones: ['dnsbl.example.org', 'other.example'],
      rspamdUrl: 'http://127.0.0.1:11333',
      rspamdTimeoutMs: 3_000,
    });
    const message = configError({
      AGENTPOST_DNSBL_ZONES: 'not a zone',
      AGENTPOST_RSPAMD_URL: 'localhost:11333',
      AGENTPOST_RSPAMD_TIMEOUT: 'soon',
    });
    expect(message).toContain('AGENTPOST_DNSBL_ZONES:');
    expect(message).toContain('AGENTPOST_RSPAMD_URL: must be the http(s) URL of an rspamd normal worker');
    expect(message).toContain('AGENTPOST_RSPAMD_TIMEOUT:');
  });

  it('applies the published rate limits and the HTTP server bounds by default, and reads them', () => {
    const defaults = loadConfig({});
    expect(defaults.rateLimits).toEqual({
      applicationPerSecond: 50,
      grantPerSecond: 200,
      multipartSendPerSecond: 10,
      failedAuthPerMinute: 20,
    });
    expect(defaults.http).toEqual({
      maxHeaderBytes: 16_384,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      keepAliveTimeoutMs: 5_000,
    });
    expect(defaults.rawMimePageBytes).toBe(10 * 1024 * 1024);
    const set = loadConfig({
      AGENTPOST_RATE_LIMIT_APPLICATION: '0',
      AGENTPOST_RATE_LIMIT_GRANT: '1000',
      AGENTPOST_RATE_LIMIT_MULTIPART_SEND: '1',
      AGENTPOST_RATE_LIMIT_FAILED_AUTH: '5',
      AGENTPOST_HTTP_MAX_HEADER_BYTES: '32768',
      AGENTPOST_HTTP_HEADERS_TIMEOUT: '2s',
      AGENTPOST_HTTP_REQUEST_TIMEOUT: '5m',
      AGENTPOST_HTTP_KEEP_ALIVE_TIMEOUT: '30',
      AGENTPOST_RAW_MIME_PAGE_BYTES: '1000',
    });
    expect(set.rateLimits).toEqual({
      applicationPerSecond: 0,
      grantPerSecond: 1000,
      multipartSendPerSecond: 1,
      failedAuthPerMinute: 5,
    });
    expect(set.http).toEqual({
      maxHeaderBytes: 32_768,
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 300_000,
      keepAliveTimeoutMs: 30_000,
    });
    expect(set.rawMimePageBytes).toBe(1000);
  });

  it.each([
    ['AGENTPOST_RATE_LIMIT_GRANT', 'fast', 'whole number of requests a second'],
    ['AGENTPOST_RATE_LIMIT_FAILED_AUTH', '-3', 'whole number of failed attempts a minute'],
    ['AGENTPOST_HTTP_MAX_HEADER_BYTES', '100', 'between 1024 and 1048576'],
    ['AGENTPOST_HTTP_HEADERS_TIMEOUT', 'soon', 'not a duration'],
  ])('rejects %s=%s naming the variable', (name, value, why) => {
    const message = configError({ [name]: value });
    expect(message).toContain(`${name}:`);
    expect(message).toContain(why);
  });

  it('reads AGENTPOST_ROLES: every role by default, any non-empty subset, unknown names refused', () => {
    expect(loadConfig({}).roles).toEqual(['http', 'smtp', 'worker']);
    // Trimmed, case-insensitive, duplicates dropped, in the order of ROLES.
    expect(loadConfig({ AGENTPOST_ROLES: ' Worker , http,http' }).roles).toEqual(['http', 'worker']);
    expect(loadConfig({ AGENTPOST_ROLES: 'smtp' }).roles).toEqual(['smtp']);
    expect(configError({ AGENTPOST_ROLES: 'http,mail' })).toContain(
      'AGENTPOST_ROLES: "mail" is not a role (expected a comma-separated subset of http, smtp, worker',
    );
    expect(configError({ AGENTPOST_ROLES: ' , ' })).toContain(
      'AGENTPOST_ROLES: give at least one role of http, smtp, worker',
    );
    expect(parseRoles('worker,smtp')).toEqual({ roles: ['smtp', 'worker'] });
    expect(parseRoles('')).toEqual({ error: expect.stringContaining('at least one role') });
  });

  it('refuses a header timeout longer than the request timeout', () => {
    expect(configError({ AGENTPOST_HTTP_HEADERS_TIMEOUT: '2m', AGENTPOST_HTTP_REQUEST_TIMEOUT: '1m' })).toContain(
      'AGENTPOST_HTTP_HEADERS_TIMEOUT: must not be longer than AGENTPOST_HTTP_REQUEST_TIMEOUT',
    );
  });

  it('lists every bad variable at once', () => {
    const message = configError({
      AGENTPOST_HTTP_PORT: 'abc',
      AGENTPOST_SMTP_PORT: 'x',
      AGENTPOST_DATABASE_URL: 'mysql://x',
    });
    expect(message).toContain('AGENTPOST_HTTP_PORT:');
    expect(message).toContain('AGENTPOST_SMTP_PORT:');
    expect(message).toContain('AGENTPOST_DATABASE_URL:');
  });
});

describe('Smart Compose model settings', () => {
  it('has no model by default, and a 60 s timeout', () => {
    const config = loadConfig({});
    expect(config.ai).toBeUndefined();
    expect(config.aiTimeoutMs).toBe(60_000);
  });

  it('reads each provider with what it needs', () => {
    expect(
      loadConfig({
        AGENTPOST_AI_PROVIDER: 'openai',
        AGENTPOST_AI_MODEL: 'gpt-4o-mini',
        AGENTPOST_AI_API_KEY: 'sk-1',
        AGENTPOST_AI_TIMEOUT: '15s',
      }),
    ).toMatchObject({
      ai: { provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-1', baseUrl: undefined },
      aiTimeoutMs: 15_000,
    });
    expect(
      loadConfig({
        AGENTPOST_AI_PROVIDER: 'anthropic',
        AGENTPOST_AI_MODEL: 'claude-3-5-haiku-latest',
        AGENTPOST_AI_API_KEY: 'sk-ant',
      }).ai?.provider,
    ).toBe('anthropic');
    expect(
      loadConfig({
        AGENTPOST_AI_PROVIDER: 'openai-compatible',
        AGENTPOST_AI_MODEL: 'llama3.1',
        AGENTPOST_AI_BASE_URL: 'http://127.0.0.1:11434/v1/',
      }).ai,
    ).toEqual({
      provider: 'openai-compatible',
      model: 'llama3.1',
      apiKey: undefined,
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
  });

  it('names what is missing or wrong', () => {
    expect(configError({ AGENTPOST_AI_PROVIDER: 'gemini' })).toContain(
      'AGENTPOST_AI_PROVIDER: must be openai, anthropic or openai-compatible',
    );
    expect(configError({ AGENTPOST_IMAP_FETCH_THREAD: 'always' })).toContain(
      'AGENTPOST_IMAP_FETCH_THREAD: must be auto, on or off',
    );
    expect(configError({ AGENTPOST_AI_PROVIDER: 'openai', AGENTPOST_AI_API_KEY: 'sk-1' })).toContain(
      'AGENTPOST_AI_MODEL: required with AGENTPOST_AI_PROVIDER=openai',
    );
    expect(configError({ AGENTPOST_AI_PROVIDER: 'anthropic', AGENTPOST_AI_MODEL: 'claude' })).toContain(
      'AGENTPOST_AI_API_KEY: required with AGENTPOST_AI_PROVIDER=anthropic',
    );
    expect(configError({ AGENTPOST_AI_PROVIDER: 'openai-compatible', AGENTPOST_AI_MODEL: 'llama3.1' })).toContain(
      'AGENTPOST_AI_BASE_URL: required with AGENTPOST_AI_PROVIDER=openai-compatible',
    );
    expect(configError({ AGENTPOST_AI_MODEL: 'gpt-4o' })).toContain(
      'AGENTPOST_AI_MODEL: set AGENTPOST_AI_PROVIDER too',
    );
    expect(configError({ AGENTPOST_AI_TIMEOUT: 'later' })).toContain('AGENTPOST_AI_TIMEOUT:');
    expect(configError({ AGENTPOST_AI_BASE_URL: 'ftp://x' })).toContain('AGENTPOST_AI_BASE_URL:');
  });
});
