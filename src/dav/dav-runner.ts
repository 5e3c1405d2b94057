/**
 * @module dav/dav-runner
 * The sync of connected accounts' calendars and contacts, run by the worker role: every
 * `AGENTPOST_IMAP_POLL_INTERVAL` (the connected accounts' poll) each account that is not backing off gets a pass
 * (./dav-sync.ts), and at once when woken (a grant just connected, a write the server refused). Passes of one grant
 * never overlap. A failed pass backs the account off (5 s doubling, at most 30 minutes) and records its error.
 */
import type { CoreDeps } from '../ports/index.js';
import type { DavSyncRunner } from './contracts.js';
import { dueAccounts, recordPass } from './dav-store.js';
import { syncDavAccount, type DavPassResult, type DavSyncParts } from './dav-sync.js';

/** Creates the runner (started by the worker role; `run` works without it). */
export function createDavSyncRunner(
  deps: Pick<CoreDeps, 'db' | 'secrets' | 'clock' | 'newId' | 'logger' | 'config'>,
  parts: DavSyncParts,
): DavSyncRunner {
  const running = new Map<string, Promise<DavPassResult>>();
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let scanning: Promise<void> | undefined;

  function run(grantId: string): Promise<DavPassResult> {
    const previous = running.get(grantId) ?? Promise.resolve(undefined);
    const pass = previous
      .catch(() => undefined)
      .then(async () => {
        try {
          const result = await syncDavAccount(deps, parts, grantId);
          await recordPass(deps.db, grantId, deps.clock.now().getTime());
          return result;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          deps.logger.warn('calendar and contacts sync failed', { grant_id: grantId, error: message });
          await recordPass(deps.db, grantId, deps.clock.now().getTime(), message);
          throw error;
        }
      });
    running.set(grantId, pass);
    void pass.then(
      () => running.get(grantId) === pass && running.delete(grantId),
      () => running.get(grantId) === pass && running.delete(grantId),
    );
    return pass;
  }

  async function scan(): Promise<void> {
    for (const grantId of await dueAccounts(deps.db, deps.clock.now().getTime())) {
      if (!started) return;
      await run(grantId).catch(() => undefined);
    }
  }

  function schedule(delayMs: number) {
    if (!started) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      scanning = scan().finally(() => {
        scanning = undefined;
        schedule(deps.config.imap.pollIntervalMs);
      });
    }, delayMs);
    timer.unref?.();
  }

  return {
    run,
    wake(grantId) {
      if (started) void run(grantId).catch(() => undefined);
    },
    start() {
      if (started) return;
      started = true;
      schedule(0);
    },
    async stop() {
      started = false;
      clearTimeout(timer);
      await scanning;
      await Promise.allSettled([...running.values()]);
    },
  };
}
