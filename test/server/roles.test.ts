/**
 * `AGENTPOST_ROLES` in one process: a service starts only the parts it is given (HTTP listener, SMTP listener,
 * background work), reports the others as absent, is ready without background loops when it has no `worker`
 * role, and closes cleanly whatever it runs.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createService, requireEveryRole, startService } from '../../server/main.js';
import { smtpClient } from '../helpers/mail.js';
import { tempDir, testConfig } from '../helpers/service.js';

const dir = tempDir('agentpost-roles-');
const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
afterAll(() => dir.remove());

describe('a service with some roles', () => {
  it('smtp only: an SMTP listener, no HTTP server, no background loops; ready without them', async () => {
    const service = await createService(testConfig(databaseUrl, { AGENTPOST_ROLES: 'smtp' }));
    try {
      const listening = await service.start();
      expect(listening).toMatchObject({
        roles: ['smtp'],
        url: undefined,
        background: undefined,
        smtpPort: expect.any(Number),
      });
      // The listener answers (the EHLO of a pooled client succeeds).
      const client = smtpClient(listening.smtpPort!);
      try {
        await expect(client.verify()).resolves.toBe(true);
      } finally {
        client.close();
      }
      // The HTTP application still serves in-process requests (embedding), and is ready without loops of its own.
      const ready = await service.app.request('/readyz');
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: { workers: string } }).checks.workers).toBe(
        'not run here (roles: smtp)',
      );
    } finally {
      await service.close();
    }
  });

  it('http only: an HTTP server, no SMTP listener', async () => {
    const service = await startService(testConfig(databaseUrl, { AGENTPOST_ROLES: 'http' }));
    try {
      expect(service).toMatchObject({
        roles: ['http'],
        smtpPort: undefined,
        background: undefined,
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      });
      expect((await fetch(`${service.url}/livez`)).status).toBe(200);
      expect(() => requireEveryRole(service)).toThrow(
        'This needs every role (http,smtp,worker); the service runs http.',
      );
    } finally {
      await service.close();
    }
  });

  it('worker only: the background loops and nothing listening; ready once they report', async () => {
    const service = await createService(testConfig(databaseUrl, { AGENTPOST_ROLES: 'worker' }));
    try {
      const before = await service.app.request('/readyz');
      expect(((await before.json()) as { checks: { workers: string } }).checks.workers).toBe('not started');
      const listening = await service.start();
      expect(listening).toMatchObject({
        roles: ['worker'],
        url: undefined,
        smtpPort: undefined,
        background: expect.any(Object),
      });
      const ready = await service.app.request('/readyz');
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: { workers: string } }).checks.workers).toBe('ok');
    } finally {
      await service.close();
    }
  });
});
