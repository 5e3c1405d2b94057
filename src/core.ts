/**
 * @module core
 * `createCore(deps)` builds every area in dependency order and returns the core, grouped by area; its type, {@link Core}
 * (src/core-types.ts), is what the operations and the faces see. The public names are exported by src/index.ts.
 */
import { createAccessLog } from './access-log/index.js';
import { createOverviewService } from './overview/index.js';
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
  createHoldService,
  createEventTimerService,
  createCalendarService,
  createEventService,
  createCalendarParser,
} from './calendar/index.js';
import { createContactService } from './contacts/index.js';
import type { CoreDeps, Logger, Notifier } from './ports/index.js';
import type { Core } from './core-types.js';
import { createHealth } from './health.js';
import { createCoreHooks, type CoreHooks } from './core-hooks.js';
import { AppError } from './errors.js';
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
import { createOAuthService, createProviderClient, type GrantTokens } from './oauth/index.js';
import { createProviders } from './providers/index.js';
import {
  createImapOutgoing,
  createImapAccounts,
  saveOAuthAccount,
  createConnector,
  createImapSync,
  createImapSyncRunner,
} from './imap/index.js';
import { createOutboxDispatcher, eventRecorder } from './outbox/index.js';
import {
  createDavClient,
  createDavRemote,
  createDavSyncRunner,
  oauthDavAccounts,
  withDavAccounts,
} from './dav/index.js';
import { createFollowUps, createOutboundService } from './outbound/index.js';
import {
  budgetGuards,
  claimGuard,
  createApprovals,
  createOversight,
  createSendReviews,
  createThreadClaims,
  runawayGuards,
} from './oversight/index.js';
import { createJobQueue, type JobHandler, type JobQueue } from './jobs/index.js';
import { createWebhookDelivery, WEBHOOK_DELIVERY_JOB, createWebhookService } from './webhooks/index.js';
import { createEventHub } from './event-stream/index.js';
import { scopedClock } from './clock-scope.js';
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
 * The grant tokens' side of the core hook: the access token of an OAuth grant's XOAUTH2 logins (asked by the IMAP
 * connector, built before them), and its refresh token revoked at the provider before the grant is deleted (best
 * effort: a provider that fails to answer is logged, the deletion goes on).
 */
function listenForGrantTokens(hooks: CoreHooks, grantTokens: GrantTokens, logger: Logger): void {
  hooks.on(
    'grantAccessToken',
    async (grantId, options) => (await grantTokens.accessToken(grantId, options)).accessToken,
  );
  hooks.on('grantDeleting', (grantId) =>
    grantTokens.revokeAtProvider(grantId).then(
      () => undefined,
      (error: unknown) =>
        logger.warn('oauth: revoking a deleted grant at its provider failed', {
          grant_id: grantId,
          error: String(error),
        }),
    ),
  );
}

/**
 * The current access token of an OAuth grant, asked through the hook (the grant tokens of src/oauth/ answer): for the
 * XOAUTH2 logins of the IMAP connector and the bearer of the DAV client, both built before the grant tokens.
 */
function accessTokenSource(hooks: CoreHooks) {
  return (grantId: string, options: { force: boolean }): Promise<string> => {
    const [token] = hooks.emit('grantAccessToken', grantId, options);
    return token ?? Promise.reject(new AppError('unauthorized', 'No OAuth token source.'));
  };
}

/**
 * Builds the core from its dependencies, each area after the areas it uses. Reactions of an area to one built
 * before it (a grant deleted or connected, an invitation received) go through the event hook made first. Every area
 * reads the clock through the test clock's scope (src/clock-scope.ts): a test-mode application's operations see its
 * virtual time, everything else the clock given.
 */
export function createCore(deps: CoreDeps): Core {
  return createAreas({ ...deps, clock: scopedClock(deps.clock) });
}

/** {@link createCore} once the clock is scoped. */
function createAreas(deps: CoreDeps): Core {
  /** How areas built early tell areas built later what happened (src/core-hooks.ts). */
  const hooks = createCoreHooks();
  const applications = createApplicationService(deps);
  const applicationDetails = createApplicationDetailsService(deps);
  const domains = createDomainService(deps);
  const connectors = createConnectorService(deps);
  const credentials = createCredentialService(deps);
  /** Connections to connected accounts' servers, shared so every use counts against one per-server limit. */
  const connector = createConnector(deps.config, deps.dns, accessTokenSource(hooks));
  /** DMARC aggregate reports mailed to `dmarc-reports@<domain>`, read by the SMTP listener and listed per domain. */
  const dmarcReports = createDmarcReportIntake(deps);
  // A deleted grant's tracking URLs stop answering in this process at once; a connected account's sync starts at once
  // (tracking and the sync listen: both are built below).
  /** CalDAV and CardDAV servers of connected accounts (src/dav/), over the process's fetch (bearer tokens: the hook). */
  const davClient = createDavClient(globalThis.fetch, accessTokenSource(hooks));
  const grants = createGrantService(deps, {
    onDeleted: (grantId) => void hooks.emit('grantDeleted', grantId),
    onDeleting: async (grantId) => void (await Promise.all(hooks.emit('grantDeleting', grantId))),
    onConnected: (grantId) => void hooks.emit('grantConnected', grantId),
    onResumed: (grantId) => void hooks.emit('grantResumed', grantId),
    accounts: [withDavAccounts(createImapAccounts(deps, connector), deps, davClient)],
  });
  /** Hosted OAuth (`/v3/connect/*`) and the provider tokens of OAuth grants. */
  const oauthParts = { applications, applicationDetails, connectors, credentials, grants };
  const { oauth, grantTokens } = createOAuth(deps, hooks, oauthParts);
  /** Where each grant's calendars and contacts are: ours, its CalDAV/CardDAV servers (written after each change), or none. */
  const remoteCollections = createDavRemote(deps, davClient, (grantId) => void hooks.emit('remoteChanged', grantId));
  const availability = createAvailabilityService(deps, grants);
  const calendars = createCalendarService(deps, grants, remoteCollections);
  const contacts = createContactService(deps, grants, remoteCollections);
  const folders = createFolderService(deps, grants, createFolderCounter(deps.db.orm));
  const mailStore = createMailStore(deps);
  /** Deleting stored messages for good (with `message.deleted`), for the message service, the sync and policy upkeep. */
  const destroyForGood = createMessageDestroyer(deps, mailStore);
  /** What applies to each grant (its workspace's policy, rules and lists), cached for the mail stages. */
  const enforcement = createEnforcement(deps);
  /** Inbound stages 2 and 3 (authentication, spam), for the inbound pipeline: SPF/DKIM/DMARC/ARC through deps.dns, and the spam score. */
  const mailStages = createMailStages(deps);
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
  hooks.on('grantResumed', () => jobs.announce());
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
  const imapProvider = createImapOutgoing(deps, {
    jobs,
    connector,
    sync: { run: (grantId, signal) => imap.run(grantId, signal) },
  });
  // OAuth grants' mail is IMAP and SMTP with XOAUTH2 on the provider's servers: the same provider serves them.
  const providers = createProviders([
    imapProvider,
    ...['google', 'microsoft'].map((name) => ({ ...imapProvider, name })),
  ]);
  /** The per-application suppression list (hard bounces, complaints, manual entries). */
  const suppressions = createSuppressionService(deps);
  /** Thread claims, and the send gate (src/oversight): modes, a claimed thread, runaway and loop guards, budgets. */
  const claims = createThreadClaims(deps, { requireGrant: grants.require });
  const gate = createOversight(deps, {
    enforcement,
    requireGrant: grants.require,
    guards: [claimGuard(claims), ...runawayGuards(deps.db, { logger: deps.logger }), ...budgetGuards(deps.db)],
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
    claims,
    // A held send's reviewers are mailed their links (the approval queue is made just below).
    onHeld: (row, reviewers) => void approvals.notify(row, reviewers),
  });
  /** The approval queue: held sends decided by a person; approving releases the exact message through `outbound`. */
  const approvals = createApprovals(deps, {
    requireGrant: grants.require,
    release: (row) => outbound.release(row),
    signer: () => signing.signer(),
    notifier: deps.notifier ?? outbound.notifier,
  });
  const sendReviews = createSendReviews(deps, { requireGrant: grants.require });
  // Untrusted iCalendar (incoming invitations) is parsed on this thread, under a deadline and a heap cap.
  const calendarParser = createCalendarParser({ onCrash: (reason) => health.threadExited('icalendar parser', reason) });
  const events = createEventService(deps, grants, calendars, outbound.invitations, {
    calendarParser,
    remote: remoteCollections,
  });
  hooks.on('invitationReceived', (grant, invitation) => events.applyInvitation(grant, invitation));
  const holds = createHoldService(deps, grants, events);
  /** The sync of connected accounts' calendars and contacts (src/dav/dav-runner.ts), run by the worker role. */
  const davSync = createDavSyncRunner(deps, { client: davClient, events: events.remote, contacts: contacts.remote });
  for (const hook of ['grantConnected', 'remoteChanged'] as const) hooks.on(hook, (grantId) => davSync.wake(grantId));
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
  const { webhooks, webhookDelivery, webhookDeliveries } = createNotifications(deps, jobs, outbound.notifier);
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
  return {
    deps,
    health,
    accounts: {
      applications,
      applicationDetails,
      domains,
      connectors,
      connectorCredentials: credentials,
      grants,
      providers,
      sync: imap,
      oauth,
      grantTokens,
      davSync,
    },
    mail: { messages, threads, attachments, attachmentText, folders, inbound, stages: mailStages },
    sending: { outbound, drafts: outbound.drafts, followUps: createFollowUps(deps, grants), smartCompose },
    calendar: { calendars, events, availability, holds, timers: createEventTimerService(deps), parser: calendarParser },
    contacts,
    admin: { workspaces, policies, rules, lists, ruleEvaluations, enforcement, policyUpkeep },
    deliverability: { signing, tracking, sendingHealth, reports, mailboxReports, suppressions, dmarcReports },
    notifications: {
      webhooks,
      deliveries: webhookDeliveries,
      outbox,
      stream: createEventHub(deps, { pollMs: deps.config.workerPollMs, maxBehind: deps.config.eventStream.maxBehind }),
    },
    jobs: { queue: jobs, handlers: jobHandlers },
    accessLog: createAccessLog(deps),
    oversight: { gate, approvals, reviews: sendReviews, claims },
    overview: createOverviewService(deps),
  };
}

/** Hosted OAuth and the provider tokens of OAuth grants, which refresh when the sync asks through the hooks. */
function createOAuth(
  deps: CoreDeps,
  hooks: ReturnType<typeof createCoreHooks>,
  parts: Pick<
    Parameters<typeof createOAuthService>[0],
    'applications' | 'applicationDetails' | 'connectors' | 'credentials' | 'grants'
  >,
) {
  const created = createOAuthService({
    ...deps,
    ...parts,
    provider: createProviderClient(deps.http ?? nodeHttpRequester, deps.dns),
    mailAccounts: { save: (tx, grantId, servers, atMs) => saveOAuthAccount(tx, deps, grantId, servers, atMs) },
    // Discovery at sign-in, with the sign-in's own token (`bearer`): no token source needed.
    davAccounts: oauthDavAccounts(deps, createDavClient()),
    record: eventRecorder(deps),
  });
  listenForGrantTokens(hooks, created.grantTokens, deps.logger);
  return created;
}

/** Inbound stages 2 and 3: SPF/DKIM/DMARC/ARC authentication through deps.dns, and the spam score. */
function createMailStages(deps: CoreDeps) {
  return {
    authenticator: createAuthenticator({
      dns: deps.dns,
      authservId: deps.config.mxHost,
      cacheTtlMs: deps.config.dnsCacheTtlMs,
    }),
    spamChecker: createSpamChecker({ dns: deps.dns, clock: deps.clock, logger: deps.logger, ...deps.config.spam }),
  };
}

/**
 * Webhooks: the subscriptions (with their delivery log, whose retries wake the job queue's workers), the delivery of
 * notifications, and the attempts the delivery runner claims in order (src/webhooks/delivery-runner.ts).
 */
function createNotifications(deps: CoreDeps, jobs: JobQueue, notifier: Notifier) {
  const transport = webhookTransportOf(deps);
  const webhookDelivery = createWebhookDelivery(deps, jobs, transport, deps.notifier ?? notifier);
  const forget = () => webhookDelivery.forgetInterest();
  const webhooks = createWebhookService(deps, transport, forget, () => jobs.announce());
  /** Webhook delivery attempts, run in order by the delivery runner (not by the generic worker). */
  const webhookDeliveries = {
    kind: WEBHOOK_DELIVERY_JOB,
    deliver: webhookDelivery.deliver,
    loadWebhooks: webhookDelivery.loadWebhooks,
  };
  return { webhooks, webhookDelivery, webhookDeliveries };
}

/** How webhooks are delivered: the HTTP requester, its timeout, and whether private addresses may be targets. */
function webhookTransportOf(deps: CoreDeps) {
  return {
    http: deps.http ?? nodeHttpRequester,
    timeoutMs: deps.config.webhookTimeoutMs,
    allowPrivate: deps.config.allowPrivateNetworks,
  };
}

export type { Core } from './core-types.js';
