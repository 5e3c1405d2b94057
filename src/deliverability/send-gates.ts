/**
 * @module deliverability/send-gates
 * What deliverability checks on every send before anything is stored or queued, and what it counts when a send is
 * accepted. Each concern is a {@link SendGate} of its own module:
 * - suppression (./suppressions.ts): a recipient on the application's suppression list refuses the send (400);
 * - paused sending (./sending-health.ts): a grant, or a sending domain, whose sending is paused refuses it (403
 *   `sending_paused`);
 * - warm-up (./warm-up.ts): a domain on its warm-up ramp refuses past the day's cap (429).
 *
 * The gates run INSIDE the send's write transaction (submission.ts `accept` and `sendDetached`), after the outbound
 * stage admitted it, so a refusal rolls back everything the send wrote and two sends cannot pass a cap together.
 * Counting ({@link SendGates.count}) runs in the same transaction: recipients sent per grant and UTC day
 * (`grant_sending_days`, the denominator of the bounce and complaint rates) and per sending domain and day
 * (`domain_daily_sends`: `sent`, what the warm-up ramp is checked against, and `rated_sent`, the denominator of the
 * domain's rates: ./domain-reputation.ts).
 */
import type { Tx } from '../../storage/index.js';
import { addDomainSent, addGrantSent, sendingDomainIdOf } from './sending-days-store.js';
import type { GatedSend, SendGate, SendGates } from './contracts.js';

/** Unix day (UTC) of unix milliseconds (src/time.ts). */
export { unixDayOfMs } from '../time.js';
import { unixDayOfMs } from '../time.js';

/** The domain of an address (after the last `@`), lower-cased. */
const domainOfAddress = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Runs the gates in order, and counts accepted sends. */
export function createSendGates(gates: readonly SendGate[]): SendGates {
  return {
    /** Each gate in order; the first refusal throws. */
    async check(tx: Tx, send: GatedSend): Promise<void> {
      for (const gate of gates) await gate.check(tx, send);
    },

    /** Counts an accepted send: recipients per grant and day, and per sending domain and day (when the domain is registered). */
    async count(tx: Tx, send: GatedSend): Promise<void> {
      const sent = send.recipients.length;
      if (sent === 0) return;
      const day = unixDayOfMs(send.at);
      if (send.grant) await addGrantSent(tx, send.grant.id, day, sent);
      const domainId = await sendingDomainIdOf(tx, send.applicationId, domainOfAddress(send.from));
      if (domainId !== undefined) await addDomainSent(tx, domainId, day, sent);
    },
  };
}

/** The gates' type. */
export type { GatedSend, SendGate, SendGates } from './contracts.js';
