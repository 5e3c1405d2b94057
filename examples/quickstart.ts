/**
 * Quickstart, as a self-checking script: starts Agentpost on a temporary database, registers a trial domain,
 * creates an Agent Account and lists its folders through the official `nylas` SDK.
 *
 *   npx tsx examples/quickstart.ts            # embedded: starts its own service on a free port
 *   AGENTPOST_URL=http://127.0.0.1:3000 AGENTPOST_API_KEY=agp_... npx tsx examples/quickstart.ts
 */
import assert from 'node:assert/strict';
import NylasSdk from 'nylas';
import { exampleService } from './support/service.js';

// nylas 8.4 ships ESM type declarations in a package without "type": "module", so under NodeNext TypeScript
// sees the default export one level down; at run time the ESM build's default export is the class itself.
const Nylas = ((NylasSdk as unknown as { default?: unknown }).default ?? NylasSdk) as typeof NylasSdk.default;

const { apiUri, apiKey, close } = await exampleService();
try {
  const nylas = new Nylas({ apiKey, apiUri });
  const suffix = Math.random().toString(36).slice(2, 8);
  const domain = `quickstart-${suffix}.agentpost.localhost`;

  // 1. Register a trial domain (usable at once, no DNS records).
  const registered = await fetch(`${apiUri}/v3/admin/domains`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Quickstart', domain_address: domain }),
  });
  assert.equal(registered.status, 200, await registered.clone().text());

  // 2. Create an Agent Account on it.
  const { data: grant } = await nylas.auth.customAuthentication({
    requestBody: { provider: 'nylas', settings: { email: `assistant@${domain}` } } as never,
  });
  assert.equal(grant.email, `assistant@${domain}`);

  // 3. It is listed with the application's grants, and has its six system folders.
  const { data: grants } = await nylas.grants.list({ queryParams: { limit: 200 } });
  assert.ok(grants.some((item) => item.id === grant.id));
  const { data: folders } = await nylas.folders.list({ identifier: grant.id });
  assert.deepEqual(
    folders.slice(0, 6).map((folder) => folder.name),
    ['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive'],
  );
  console.log(`ok: ${grant.email} (${grant.id}) has folders ${folders.map((folder) => folder.name).join(', ')}`);
} finally {
  await close();
}
