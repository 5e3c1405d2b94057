/**
 * Shared by the examples: use the running service named by AGENTPOST_URL and AGENTPOST_API_KEY, or start one
 * on a temporary database (free ports) so the example runs anywhere.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/index.js';
import { requireEveryRole, startService } from '../../server/main.js';

export interface ExampleService {
  apiUri: string;
  apiKey: string;
  close: () => Promise<void>;
}

/** Connects to AGENTPOST_URL, or starts a throwaway service. */
export async function exampleService(): Promise<ExampleService> {
  const url = process.env.AGENTPOST_URL || undefined;
  if (url) {
    const apiKey = process.env.AGENTPOST_API_KEY;
    if (!apiKey) throw new Error('AGENTPOST_API_KEY must be set with AGENTPOST_URL');
    return { apiUri: url, apiKey, close: async () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-example-'));
  const service = requireEveryRole(
    await startService(
      loadConfig({
        AGENTPOST_DATABASE_URL: `file:${join(dir, 'agentpost.db')}`,
        AGENTPOST_HTTP_PORT: '0',
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_LOG_LEVEL: 'warn',
      }),
    ),
  );
  return {
    apiUri: service.url,
    apiKey: service.generatedKey!,
    async close() {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Registers a fresh trial domain and creates Agent Accounts on it; returns their addresses. */
export async function createMailboxes(service: ExampleService, names: string[]): Promise<string[]> {
  const domain = `example-${Math.random().toString(36).slice(2, 8)}.agentpost.localhost`;
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${service.apiUri}/v3${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  };
  await call('/admin/domains', { name: 'Example', domain_address: domain });
  const addresses = names.map((name) => `${name}@${domain}`);
  for (const [index, email] of addresses.entries())
    await call('/connect/custom', { provider: 'nylas', settings: { email }, name: names[index] });
  return addresses;
}

/** Polls until `check` returns a value (mail delivery is asynchronous). */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
