/**
 * @module core
 * `createCore(deps)` builds every area in dependency order and returns the core, grouped by area; its type, {@link Core}
 * (src/core-types.ts), is what the operations and the faces see. The public names are exported by src/index.ts.
 */
import { createAccessLog } from './access-log/index.js';
import {
  createEnforcement,
  createPolicyUpkeep,
  createEvaluationService,
  createListService,
  createPolicyService,
  createRuleService,
  createWorkspaceService,
} from './admin/index.js';
import { createApplicationDetailsService, createApplicationService } from './applications/index.js';
import { createAttachmentTextReader } from './attachment-text/index.js';
import {
  createAvailabilityService,
  createCalendarService,
  createEventService,
  createCalendarParser,
} from './calendar/index.js';
import { createContactService } from './contacts/index.js';
import type { CoreDeps } from './ports/index.js';
import type { Core } from './core-types.js';
import { createHealth } from './health.js';
import { createCoreHooks } from './core-hooks.js';
import { createSmartComposeService } from './smart-compose/index.js';
import { createConnectorService, createCredentialService } from './connectors/index.js';
import { createDomainService, createDmarcReportIntake } from './domains/index.js';
import { createFolderService, createGrantService } from './grants/index.js';
import {
  createAfterDelivery,
  invitationJobsOf,
  createInboundService,
  createAuthenticator,
  createSpamChecker,
} from './mail/index.js';
import {
  createAttachmentService,
  createFolderCounter,
  createMailStore,
  createMessageDestroyer,
  createMessageService,
  createThreadService,
} from './messages/index.js';
import { createProviders } from './providers/index.js';
import {
  createImapOutgoing,
  createImapAccounts,
  createConnector,
  createImapSync,
  createImapSyncRunner,
} from './imap/index.js';
import { createOutboxDispatcher } from './outbox/index.js';
import { createOutboundService } from './outbound/index.js';
import { createApprovals, createOversight, createSendReviews, runawayGuards } from './oversight/index.js';
import { createJobQueue, type JobHandler } from './jobs/index.js';
import { createWebhookDelivery, WEBHOOK_DELIVERY_JOB, createWebhookService } from './webhooks/index.js';
import { nodeHttpRequester } from './system/http-requester.js';
import {
  createSigningKeys,
  createThreadReplies,
  createMailboxReports,
  createSendingHealth,
  createReportIntake,
  createSuppressionService,
  createTrackingService,
} from './deliverability/index.js';

/**
 * Builds the core from its dependencies, each area after the areas it uses. Reactions of an area to one built
 * before it (a grant deleted or connected, an invitation received) go through the event hook made first.
 */
export function createCore(deps: CoreDeps): Core {
  /** How areas built early tell areas built later what happened (src/core-hooks.ts). */
  const hooks = createCoreHooks();
  const applications = createApplicationService(deps);
  const applicationDetails = createApplicationDetailsService(deps);
  const domains = createDomainService(deps);
  const connectors = createConnectorService(deps);
  const connectorCredentials = createCredentialService(deps);
  /** Connections to connected accounts' servers, shared so every use counts against one per-server limit. */
  const connector = createConnector(deps.config, deps.dns);
  /** DMARC aggregate reports mailed to `dmarc-reports@<domain>`, read by the SMTP listener and listed per domain. */
  const dmarcReports = createDmarcReportIntake(deps);
  // A deleted grant's tracking URLs stop answering in this process at once; a connected account's sync starts at once
  // (tracking and the sync listen: both are built below).
  const grants = createGrantService(deps, {
    onDeleted: (grantId) => void hooks.emit('grantDeleted', grantId),
    onConnected: (grantId) => void hooks.emit('grantConnected', grantId),
    accounts: [createImapAccounts(deps, connector)],
  });
  const availability = createAvailabilityService(deps, grants);
  const calendars = createCalendarService(deps, grants);
  const contacts = createContactService(deps, grants);
  const folders = createFolderService(deps, grants, createFolderCounter(deps.db.orm));
  const mailStore = createMailStore(deps);
  /** Deleting stored messages for good (with `message.deleted`), for the message service, the sync and policy upkeep. */
  const destroyForGood = createMessageDestroyer(deps, mailStore);
  /** What applies to each grant (its workspace's policy, rules and lists), cached for the mail stages. */
  const enforcement = createEnforcement(deps);
  /** Inbound stages 2 and 3 (authentication, spam), for the inbound pipeline: SPF/DKIM/DMARC/ARC through deps.dns, and the spam score. */
  const mailStages = {
    authenticator: createAuthenticator({
      dns: deps.dns,
      authservId: deps.config.mxHost,
      cacheTtlMs: deps.config.dnsCacheTtlMs,
    }),
    spamChecker: createSpamChecker({ dns: deps.dns, clock: deps.clock, logger: deps.logger, ...deps.config.spam }),
  };
  // Administration (§15): every write invalidates the enforcement cache, so this process applies it at once.
  const invalidate = () => enforcement.invalidate();
  const workspaces = createWorkspaceService(deps, invalidate);
  const policies = createPolicyService(deps, invalidate);
  const rules = createRuleService(deps, invalidate);
  const lists = createListService(deps, invalidate);
  const ruleEvaluations = createEvaluationService(deps);
  const health = createHealth(deps.logger, () => deps.clock.now());
  /** The installation's signing key (tracking URLs, VERP return paths), shared through the database. */
  const signing = createSigningKeys(deps);
  deps.db.onThreadExit((thread, reason) => health.threadExited(thread, reason));
  const jobs = createJobQueue(deps);
  // After each delivery: iMIP parts to calendars (a durable job; the event service, built below, listens), senders to contacts.
  const afterDelivery = createAfterDelivery(deps, {
    contacts,
    applyInvitation: async (grant, invitation) =>
      (await Promise.all(hooks.emit('invitationReceived', grant, invitation))).flat(),
  });
  // Replies to sends tracked with thread_replies: counted by a job stored with the reply (thread.replied).
  const threadReplies = createThreadReplies(deps);
  /**
   * Sending health: its `listener` is the report intake's ReportListener (bounces and complaints pause a grant's
   * sending on their rates); its gate, in the outbound service's send gates, refuses sends while paused.
   */
  const sendingHealth = createSendingHealth(deps);
  /** Bounces and complaints: DSNs and ARF reports to VERP return paths, and permanent failures of delivery; each report may pause its grant's sending. */
  const reports = createReportIntake(deps, { signing, listeners: [sendingHealth.listener] });
  /** Bounces and complaints that come back to a connected account's own inbox: a job stored with the synced message. */
  const mailboxReports = createMailboxReports(deps, reports);
  const inbound = createInboundService(deps, mailStore, {
    afterDelivery: { jobsOf: invitationJobsOf, followUp: (mail) => afterDelivery.followUp(mail) },
    replies: threadReplies,
    mailboxReports,
    jobs,
    onThreadExit: (thread, reason) => health.threadExited(thread, reason),
    enforcement,
    // Authentication on all mail that arrives over SMTP; spam where a policy asks. Tests and embedders may inject their own.
    stages: deps.inboundStages ?? mailStages,
  });
  /** The sync in of connected IMAP accounts (src/imap/sync-runner.ts), run by the worker role. */
  const imap = createImapSyncRunner(deps, {
    sync: createImapSync(deps, { inbound, store: mailStore, destroyForGood }),
    connector,
  });
  hooks.on('grantConnected', (grantId) => imap.wake(grantId));
  /** What differs between mailbox kinds (src/providers): hosted, and connected IMAP/SMTP accounts (their sync is `imap`). */
  const providers = createProviders([
    createImapOutgoing(deps, { jobs, connector, sync: { run: (grantId, signal) => imap.run(grantId, signal) } }),
  ]);
  /** The per-application suppression list (hard bounces, complaints, manual entries). */
  const suppressions = createSuppressionService(deps);
  /** Oversight's send gate (src/oversight): modes, the untrusted-read gate, runaway guards and budgets, in one order. */
  const gate = createOversight(deps, {
    enforcement,
    requireGrant: grants.require,
    guards: runawayGuards(deps.db, { logger: deps.logger }),
  });
  const outbound = createOutboundService(deps, {
    grants,
    store: mailStore,
    inbound,
    jobs,
    contacts,
    enforcement,
    reports,
    signing,
    providers,
    oversight: gate,
  });
  /** The approval queue: held sends decided by a person; approving releases the exact message through `outbound`. */
  const approvals = createApprovals(deps, { requireGrant: grants.require, release: (row) => outbound.release(row) });
  const sendReviews = createSendReviews(deps, { requireGrant: grants.require });
  // Untrusted iCalendar (incoming invitations) is parsed on this thread, under a deadline and a heap cap.
  const calendarParser = createCalendarParser({ onCrash: (reason) => health.threadExited('icalendar parser', reason) });
  const events = createEventService(deps, grants, calendars, outbound.invitations, { calendarParser });
  hooks.on('invitationReceived', (grant, invitation) => events.applyInvitation(grant, invitation));
  const messages = createMessageService(deps, grants, mailStore, outbound.sentState, providers);
  /** Open and click tracking: the pixel and redirect answers, hits recorded in batches, engagement per message. */
  const tracking = createTrackingService(deps, { signing, grants, sentState: outbound.sentState });
  hooks.on('grantDeleted', (grantId) => tracking.forgetGrant(grantId));
  const threads = createThreadService(deps, grants, mailStore, messages, outbound.drafts, providers);
  /** Attachments read as text (read_attachment): worker threads started on first use or by warmUp, closed with the core. */
  const attachmentText = createAttachmentTextReader();
  const attachments = createAttachmentService(deps, grants, attachmentText);
  /** Smart Compose: message bodies from a prompt, by the configured model (deps.text). */
  const smartCompose = createSmartComposeService(deps, grants, messages);
  /** Retention periods and additional folders of policies (run periodically by src/background/background.ts). */
  const policyUpkeep = createPolicyUpkeep(deps, { destroyForGood });
  const webhookTransport = {
    http: deps.http ?? nodeHttpRequester,
    timeoutMs: deps.config.webhookTimeoutMs,
    allowPrivate: deps.config.allowPrivateNetworks,
  };
  const webhookDelivery = createWebhookDelivery(deps, jobs, webhookTransport, deps.notifier ?? outbound.notifier);
  const webhooks = createWebhookService(deps, webhookTransport, () => webhookDelivery.forgetInterest());
  const outbox = createOutboxDispatcher(deps, [webhookDelivery.fanOut]);
  /** Every background job kind and its handler (run by src/background/background.ts). */
  const jobHandlers: Record<string, JobHandler> = {
    ...webhookDelivery.handlers,
    ...outbound.handlers,
    ...afterDelivery.handlers,
    ...threadReplies.handlers,
    ...mailboxReports.handlers,
    ...providers.handlers,
  };
  /** Webhook delivery attempts, run in order by src/webhooks/delivery-runner.ts (not by the generic worker). */
  const webhookDeliveries = {
    kind: WEBHOOK_DELIVERY_JOB,
    deliver: webhookDelivery.deliver,
    loadWebhooks: webhookDelivery.loadWebhooks,
  };
  return {
    deps,
    health,
    accounts: {
      applications,
      applicationDetails,
      domains,
      connectors,
      connectorCredentials,
      grants,
      providers,
      sync: imap,
    },
    mail: { messages, threads, attachments, attachmentText, folders, inbound, stages: mailStages },
    sending: { outbound, drafts: outbound.drafts, smartCompose },
    calendar: { calendars, events, availability, parser: calendarParser },
    contacts,
    admin: { workspaces, policies, rules, lists, ruleEvaluations, enforcement, policyUpkeep },
    deliverability: { signing, tracking, sendingHealth, reports, mailboxReports, suppressions, dmarcReports },
    notifications: { webhooks, deliveries: webhookDeliveries, outbox },
    jobs: { queue: jobs, handlers: jobHandlers },
    accessLog: createAccessLog(deps),
    oversight: { gate, approvals, reviews: sendReviews },
  };
}

export type { Core } from './core-types.js';
