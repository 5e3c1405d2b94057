/**
 * @module deliverability/tracking-engagement
 * A sent message's engagement (./tracking-service.ts): opens, clicks per link, replies and each recipient's delivery
 * state.
 */
import { and, asc, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { notFound } from '../errors.js';
import { notDraft } from '../messages/index.js';
import type { GetMessageEngagementInput, MessageEngagement } from '../schemas/engagement.js';
import type { TrackingState } from './tracking-state.js';
import { engagementTotals } from './tracking-store.js';

/** One sent message's engagement: opens, clicks per link, replies, and each recipient's delivery state. */
export async function engagementOf(
  tracking: TrackingState,
  principal: Principal,
  input: GetMessageEngagementInput,
): Promise<MessageEngagement> {
  const grant = await tracking.parts.grants.require(principal, input.grant_id);
  const [message] = await tracking.db.orm
    .select({ id: tables.messages.id })
    .from(tables.messages)
    .where(and(eq(tables.messages.grantId, grant.id), eq(tables.messages.id, input.message_id), notDraft()))
    .limit(1);
  if (!message) throw notFound('Message', input.message_id);
  const delivery = (await tracking.parts.sentState([message.id])).get(message.id)?.deliveryStatus ?? [];
  const [tracked] = await tracking.db.orm
    .select()
    .from(tables.trackedMessages)
    .where(and(eq(tables.trackedMessages.grantId, grant.id), eq(tables.trackedMessages.messageId, message.id)))
    .limit(1);
  const base = {
    object: 'message_engagement' as const,
    grant_id: grant.id,
    message_id: message.id,
    delivery_status: delivery,
  };
  if (!tracked)
    return {
      ...base,
      tracked: false,
      opens: { count: 0, hits: 0, flagged: 0 },
      clicks: { count: 0, hits: 0, flagged: 0 },
      links: [],
      replies: { count: 0, message_ids: [] },
    };
  const totals = await engagementTotals(tracking.db, tracked.id);
  const summary = (kind: 'open' | 'click', count: number) => {
    const counted = totals.find((total) => total.kind === kind && total.counted);
    const flagged = totals.find((total) => total.kind === kind && !total.counted);
    return {
      count,
      hits: Number(counted?.hits ?? 0) + Number(flagged?.hits ?? 0),
      flagged: Number(flagged?.hits ?? 0),
      ...(counted
        ? { first_at: Math.floor(Number(counted.first) / 1000), last_at: Math.floor(Number(counted.last) / 1000) }
        : {}),
    };
  };
  const links = await tracking.db.orm
    .select()
    .from(tables.trackingLinks)
    .where(eq(tables.trackingLinks.messageId, tracked.id))
    .orderBy(asc(tables.trackingLinks.linkIndex));
  const replies = await tracking.db.orm
    .select({ id: tables.engagementEvents.replyMessageId })
    .from(tables.engagementEvents)
    .where(
      and(
        eq(tables.engagementEvents.messageId, tracked.id),
        eq(tables.engagementEvents.kind, 'reply'),
        eq(tables.engagementEvents.counted, true),
      ),
    )
    .orderBy(asc(tables.engagementEvents.at), asc(tables.engagementEvents.id));
  const replyIds = replies.flatMap((reply) => (reply.id === null ? [] : [reply.id]));
  return {
    ...base,
    tracked: true,
    tracking_options: {
      opens: tracked.opens,
      links: tracked.links,
      thread_replies: tracked.threadReplies,
      ...(tracked.label !== null ? { label: tracked.label } : {}),
    },
    sent_at: Math.floor(tracked.sentAt / 1000),
    opens: summary('open', tracked.opensCount),
    clicks: summary('click', tracked.clicksCount),
    links: links.map((link) => ({ link_index: String(link.linkIndex), url: link.url, count: link.clicksCount })),
    replies: { count: replyIds.length, message_ids: replyIds },
  };
}
