/**
 * @module deliverability/sending-health
 * Per grant, the bounce and complaint rates of what it sent, and the pause of its sending when one crosses its
 * threshold (issue 18 part 3).
 *
 * - {@link SendingHealth.listener} is a {@link ReportListener}: told of each bounce or complaint in the transaction
 *   that records it, it adds it to the grant's day (`grant_sending_days`, the day of the report, UTC), then judges the
 *   rolling window (`AGENTPOST_PAUSE_WINDOW`: that many UTC days ending today) with {@link pauseReasonOf}: hard
 *   bounces over recipients sent, and complaints over recipients sent, once at least `AGENTPOST_PAUSE_MIN_SENT`
 *   recipients were sent to. A rate that reaches its threshold (`AGENTPOST_PAUSE_BOUNCE_RATE`,
 *   `AGENTPOST_PAUSE_COMPLAINT_RATE`) pauses the grant in that same transaction: the grant's `sending_paused_at` and
 *   reason, a `sending_state_changes` row (actor `service`) and a `grant.updated` notification.
 * - {@link SendingHealth.gate} is a {@link SendGate}: a send of a paused grant is refused with 403 and the error type
 *   `sending_paused`, its message naming the reason and how to resume. It reads the grant inside the send's
 *   transaction, so a pause that committed a moment ago already applies; scheduled sends that fire while paused fail
 *   with the same message.
 * Resuming is the API's (./sending-state.ts, `PATCH /v3/grants/{id}` with `sending.status = "active"`).
 *
 * The same is done per sending domain (./domain-reputation.ts): each report is also added to the day of the
 * registered domain its message was sent from, the domain's window is judged against `config.deliverability.domain`
 * (the `AGENTPOST_DOMAIN_PAUSE_*` settings, defaulting to the grant's), and a rate that reaches its threshold pauses
 * the domain (`domain.updated`); the gate then refuses every send from that domain, of any grant, with 403
 * `sending_paused` naming the domain.
 */
import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import {
  toDomain,
  domainOfAddress,
  domainPausedError,
  domainWindowTotals,
  pauseDomainSending,
  recordDomainReport,
  reputationOf,
  sendingDomainOf,
} from '../domains/index.js';
import { grantOf, pauseSending, RESUME_HINT } from '../grants/index.js';
import type { GatedSend, RecordedReport, ReportListener, SendGate, SendingHealth, WindowTotals } from './contracts.js';
import { unixDayOfMs } from './send-gates.js';
import { addGrantReports, grantWindowTotals } from './sending-days-store.js';

/** The error type of a send refused because the grant's sending is paused. */
export const SENDING_PAUSED = 'sending_paused';

/** The thresholds (config.deliverability). */
export interface PauseThresholds {
  pauseBounceRate: number;
  pauseComplaintRate: number;
  pauseMinSent: number;
  pauseWindowDays: number;
}

/** A rate as a short percentage (5%, 0.1%, 6.67%). */
function percent(rate: number): string {
  return `${Number((rate * 100).toFixed(2))}%`;
}

/**
 * Why a grant's sending should pause, or undefined: below the minimum volume nothing is judged; else the hard-bounce
 * rate, then the complaint rate, each paused on when it reaches (≥) its threshold. Pure.
 */
export function pauseReasonOf(totals: WindowTotals, thresholds: PauseThresholds): string | undefined {
  if (totals.sent < thresholds.pauseMinSent || totals.sent === 0) return undefined;
  const window = `over the last ${thresholds.pauseWindowDays} day${thresholds.pauseWindowDays === 1 ? '' : 's'} (UTC)`;
  const bounceRate = totals.hardBounces / totals.sent;
  if (bounceRate >= thresholds.pauseBounceRate) {
    return `hard-bounce rate ${percent(bounceRate)} (${totals.hardBounces} of ${totals.sent} recipients) reached the threshold of ${percent(thresholds.pauseBounceRate)} ${window}`;
  }
  const complaintRate = totals.complaints / totals.sent;
  if (totals.complaints > 0 && complaintRate >= thresholds.pauseComplaintRate) {
    return `complaint rate ${percent(complaintRate)} (${totals.complaints} of ${totals.sent} recipients) reached the threshold of ${percent(thresholds.pauseComplaintRate)} ${window}`;
  }
  return undefined;
}

/** The refusal of a send of a paused grant. */
export function sendingPausedError(email: string, reason: string, pausedAt: number): AppError {
  return new AppError(
    'forbidden',
    `Sending from ${email} is paused since ${new Date(pausedAt * 1000).toISOString()}: ${reason}. Nothing was sent. Remove the addresses that bounce or complain, then resume sending with ${RESUME_HINT}.`,
    { reason, paused_at: pausedAt },
    { type: SENDING_PAUSED },
  );
}

/** Creates sending health: the report listener that pauses, and the gate that refuses sends while paused. */
export function createSendingHealth(deps: Pick<CoreDeps, 'clock' | 'newId' | 'config'>): SendingHealth {
  const { clock, newId } = deps;
  const thresholds: PauseThresholds = deps.config.deliverability;
  const domainThresholds: PauseThresholds = deps.config.deliverability.domain;
  const record = eventRecorder(deps);

  /** Sums of the grant's window, today included. */
  function windowTotals(tx: Tx, grantId: string, today: number): Promise<WindowTotals> {
    return grantWindowTotals(tx, grantId, today - thresholds.pauseWindowDays + 1, today);
  }

  /** Adds a report to the grant's day and pauses the grant on its window's rates. */
  async function judgeGrant(
    tx: Tx,
    report: RecordedReport,
    counts: { hard: number; soft: number; complaint: number },
  ): Promise<void> {
    if (report.grantId === null) return;
    const { hard, complaint } = counts;
    await addGrantReports(tx, report.grantId, unixDayOfMs(report.at), counts);
    if (hard === 0 && complaint === 0) return;
    const now = clock.now();
    const reason = pauseReasonOf(await windowTotals(tx, report.grantId, unixDayOfMs(now.getTime())), thresholds);
    if (!reason) return;
    const at = unixSeconds(now);
    const paused = await pauseSending(tx, newId, report.grantId, reason, at);
    if (paused)
      await record(tx, {
        applicationId: paused.applicationId,
        grantId: paused.id,
        type: 'grant.updated',
        objectId: paused.id,
        object: await grantOf(tx, paused),
        createdAt: at,
      });
  }

  /** Adds a report to the sending domain's day and pauses the domain on its window's rates. */
  async function judgeDomain(
    tx: Tx,
    report: RecordedReport,
    counts: { hard: number; soft: number; complaint: number },
  ): Promise<void> {
    const domain = await sendingDomainOf(tx, report.applicationId, report.from);
    if (!domain) return;
    await recordDomainReport(tx, domain.id, unixDayOfMs(report.at), counts);
    if (counts.hard === 0 && counts.complaint === 0) return;
    const now = clock.now();
    const totals = (await domainWindowTotals(tx, [domain.id], now.getTime(), domainThresholds.pauseWindowDays)).get(
      domain.id,
    );
    if (!totals) return;
    const reason = pauseReasonOf(totals, domainThresholds);
    if (!reason) return;
    const at = unixSeconds(now);
    const paused = await pauseDomainSending(tx, newId, domain.id, reason, at);
    if (paused) {
      await record(tx, {
        applicationId: paused.applicationId,
        type: 'domain.updated',
        objectId: paused.id,
        object: toDomain(paused, reputationOf(totals, domainThresholds.pauseWindowDays)),
        createdAt: at,
      });
    }
  }

  const listener: ReportListener = {
    async reported(tx: Tx, report: RecordedReport): Promise<void> {
      const counts = {
        hard: report.kind === 'bounce' && report.bounceType === 'hard' ? 1 : 0,
        soft: report.kind === 'bounce' && report.bounceType !== 'hard' ? 1 : 0,
        complaint: report.kind === 'complaint' ? 1 : 0,
      };
      await judgeGrant(tx, report, counts);
      await judgeDomain(tx, report, counts);
    },
  };

  const gate: SendGate = {
    name: SENDING_PAUSED,
    async check(tx: Tx, send: GatedSend): Promise<void> {
      // The rows as they are now, inside the send's transaction: the grant given may have been read before a pause.
      if (send.grant) {
        const [row] = await tx
          .select({
            email: tables.grants.email,
            pausedAt: tables.grants.sendingPausedAt,
            reason: tables.grants.sendingPausedReason,
          })
          .from(tables.grants)
          .where(eq(tables.grants.id, send.grant.id));
        if (row?.pausedAt != null) throw sendingPausedError(row.email, row.reason ?? 'sending is paused', row.pausedAt);
      }
      // The domain of the From, and the grant's own domain when it differs: a paused domain refuses every sender on it.
      const addresses = new Set([
        domainOfAddress(send.from),
        ...(send.grant ? [domainOfAddress(send.grant.email)] : []),
      ]);
      const paused = await tx
        .select({
          id: tables.domains.id,
          domainAddress: tables.domains.domainAddress,
          sendingPausedAt: tables.domains.sendingPausedAt,
          sendingPausedReason: tables.domains.sendingPausedReason,
        })
        .from(tables.domains)
        .where(
          and(
            eq(tables.domains.applicationId, send.applicationId),
            inArray(tables.domains.domainAddress, [...addresses]),
            isNotNull(tables.domains.sendingPausedAt),
          ),
        )
        .limit(1);
      if (paused[0]) throw domainPausedError(paused[0]);
    },
  };

  return { listener, gate };
}

/** Sending health's type. */
export type { SendingHealth } from './contracts.js';
