/**
 * @module core-types
 * {@link Core}, what `createCore` (src/core.ts) returns: the areas' services grouped by area, two levels deep
 * (`core.mail.messages`, `core.calendar.events`). Each group names the folders of src/ it holds; each service is typed
 * by the interface its area's front door exports.
 */
import type { DavSyncRunner } from './dav/index.js';
import type {
  Enforcement,
  EvaluationService,
  ListService,
  PolicyService,
  PolicyUpkeep,
  RuleService,
  WorkspaceService,
} from './admin/index.js';
import type { AccessLog } from './access-log/index.js';
import type { ApplicationDetailsService, ApplicationService } from './applications/index.js';
import type { AttachmentTextReader } from './attachment-text/index.js';
import type {
  AvailabilityService,
  CalendarParser,
  CalendarService,
  EventService,
  HoldService,
  EventTimerService,
} from './calendar/index.js';
import type { ContactService } from './contacts/index.js';
import type {
  MailboxReports,
  ReportIntake,
  SendingHealth,
  SigningKeys,
  SuppressionService,
  TrackingService,
} from './deliverability/index.js';
import type { ConnectorService, CredentialService } from './connectors/index.js';
import type { DmarcReportIntake, DomainService } from './domains/index.js';
import type { FolderService, GrantService } from './grants/index.js';
import type { Health } from './health.js';
import type { ImapSyncRunner } from './imap/index.js';
import type { JobHandler, JobQueue } from './jobs/index.js';
import type { InboundService } from './mail/index.js';
import type { AttachmentService, MessageService, ThreadService } from './messages/index.js';
import type { DraftService, FollowUps, OutboundService } from './outbound/index.js';
import type { GrantTokens, OAuthService } from './oauth/index.js';
import type { EventHub } from './event-stream/index.js';
import type { OutboxDispatcher } from './outbox/index.js';
import type { OverviewService } from './overview/index.js';
import type { ApprovalService, Oversight, ReadNotes, SendReviewService, ThreadClaims } from './oversight/index.js';
import type { Authenticator, CoreDeps, SpamChecker } from './ports/index.js';
import type { Providers } from './providers/index.js';
import type { SmartComposeService } from './smart-compose/index.js';
import type { DeliveryFunctions, WebhookService } from './webhooks/index.js';

/** Who uses the service and what they own (src/applications/, src/connectors/, src/domains/, src/grants/, src/providers/, src/imap/). */
export interface AccountsArea {
  /** Applications, their API keys and service accounts; authenticates callers. */
  applications: ApplicationService;
  /** The calling application's details and its redirect URIs. */
  applicationDetails: ApplicationDetailsService;
  /** Domains and their DNS verification. */
  domains: DomainService;
  /** Connectors: per provider, the OAuth client, scopes and endpoint overrides the hosted OAuth flow reads. */
  connectors: ConnectorService;
  /** The connectors' credentials (service accounts, admin consent, overrides), their data sealed. */
  connectorCredentials: CredentialService;
  /** Grants: Agent Accounts and connected accounts. */
  grants: GrantService;
  /** What differs between mailbox kinds: hosted, and connected IMAP/SMTP accounts. */
  providers: Providers;
  /** The sync in of connected IMAP accounts, run by the worker role. */
  sync: ImapSyncRunner;
  /** Hosted OAuth: the browser's steps, the token endpoint, revocation, token info, provider detection. */
  oauth: OAuthService;
  /** The provider tokens of OAuth grants, refreshed before they expire. */
  grantTokens: GrantTokens;
  /** The sync of connected accounts' calendars (CalDAV) and contacts (CardDAV), run by the worker role. */
  davSync: DavSyncRunner;
}

/** Stored mail and mail in (src/messages/, src/mail/, the folders of src/grants/). */
export interface MailArea {
  messages: MessageService;
  threads: ThreadService;
  attachments: AttachmentService;
  /** Reads attachments as text on worker threads (src/attachment-text): warmed by the HTTP role, closed at shutdown. */
  attachmentText: AttachmentTextReader;
  folders: FolderService;
  /** Mail in: the store path of the SMTP listener, local delivery and the sync. */
  inbound: InboundService;
  /** Inbound stages 2 and 3: SPF/DKIM/DMARC/ARC authentication and the spam score. */
  stages: { authenticator: Authenticator; spamChecker: SpamChecker };
}

/** Mail out and what composes it (src/outbound/, src/smart-compose/). */
export interface SendingArea {
  /** Sends, schedules, transactional sends, invitations, the durable outbound queue. */
  outbound: OutboundService;
  drafts: DraftService;
  /** Follow-ups cancelled by a reply (issue 40, item 6). */
  followUps: FollowUps;
  /** Message bodies from a prompt, by the configured model. */
  smartCompose: SmartComposeService;
}

/** Oversight enforced by the server (src/oversight/): the send gate, the approval queue, the review list. */
export interface OversightArea {
  /** The send gate (modes, guards) and what an agent's reads leave for the untrusted-read gate. */
  gate: Oversight & ReadNotes;
  approvals: ApprovalService;
  reviews: SendReviewService;
  /** Thread claims: leases on threads that only their holder answers (issue 40, item 4). */
  claims: ThreadClaims;
}

/** Calendars, events, availability (src/calendar/). */
export interface CalendarArea {
  calendars: CalendarService;
  events: EventService;
  availability: AvailabilityService;
  /** Tentative holds of candidate slots (issue 40). */
  holds: HoldService;
  /** The due-runner of `event.starting` and `event.ending` (issue 40, item 7). */
  timers: EventTimerService;
  /** Untrusted iCalendar parsed on a thread of its own, under a deadline and a heap cap. */
  parser: CalendarParser;
}

/** Workspaces and what applies in them (src/admin/). */
export interface AdminArea {
  workspaces: WorkspaceService;
  policies: PolicyService;
  rules: RuleService;
  lists: ListService;
  ruleEvaluations: EvaluationService;
  /** What applies to each grant (its workspace's policy, rules and lists), cached for the mail stages. */
  enforcement: Enforcement;
  /** Retention periods and additional folders of policies, run by the worker role. */
  policyUpkeep: PolicyUpkeep;
}

/** What makes mail arrive and what comes back (src/deliverability/, the DMARC reports of src/domains/). */
export interface DeliverabilityArea {
  /** The installation's signing key (tracking URLs, VERP return paths). */
  signing: SigningKeys;
  /** Open and click tracking. */
  tracking: TrackingService;
  /** Pauses a grant's sending on its bounce and complaint rates. */
  sendingHealth: SendingHealth;
  /** Bounces and complaints: DSNs and ARF reports to VERP return paths, permanent failures of delivery. */
  reports: ReportIntake;
  /** Bounces and complaints that come back to a connected account's own inbox. */
  mailboxReports: MailboxReports;
  /** The per-application suppression list. */
  suppressions: SuppressionService;
  /** DMARC aggregate reports mailed to `dmarc-reports@<domain>`. */
  dmarcReports: DmarcReportIntake;
}

/** Webhook notifications (src/webhooks/, src/outbox/). */
export interface NotificationsArea {
  webhooks: WebhookService;
  /** Webhook delivery attempts, run in order by the delivery runner (not by the generic worker). */
  deliveries: DeliveryFunctions & { kind: string };
  /** Turns outbox rows into webhook delivery jobs. */
  outbox: OutboxDispatcher;
  /** The event stream's hub: the outbox's events to clients with no public URL (`GET /v3/events/stream`). */
  stream: EventHub;
}

/** Background jobs (src/jobs/), run by the worker role (src/background/). */
export interface JobsArea {
  queue: JobQueue;
  /** Every background job kind and its handler. */
  handlers: Record<string, JobHandler>;
}

/** The core, as the operations and the faces see it. */
export interface Core {
  /** What the core was built from. */
  deps: CoreDeps;
  /** Liveness and readiness. */
  health: Health;
  accounts: AccountsArea;
  mail: MailArea;
  sending: SendingArea;
  calendar: CalendarArea;
  contacts: ContactService;
  admin: AdminArea;
  deliverability: DeliverabilityArea;
  notifications: NotificationsArea;
  jobs: JobsArea;
  /** Every operation call on every face, batched into the database (src/access-log/). */
  accessLog: AccessLog;
  /** Oversight enforced by the server (src/oversight/). */
  oversight: OversightArea;
  /** The dashboard's overview: counts of what a key reaches (src/overview/). */
  overview: OverviewService;
}
