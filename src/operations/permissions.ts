/**
 * @module operations/permissions
 * What each operation needs of a key (issue 36): the permission (or any one of several) it takes, and whether a key
 * narrower than the application may call it without a grant in its input. One table, so every operation is decided
 * in one place; the registry refuses an operation that is missing here, and docs/keys.md is checked against it.
 */
import type { Permission } from '../access.js';

/** A permission, any one of several, or `any` (every key may call it; what it shows is still scoped). */
export type Needs = Permission | readonly Permission[] | 'any';

const read = 'mail.read';
const write = 'mail.write';
const send = 'mail.send';
const drafts = 'drafts.write';

/** What each operation needs, by name. */
export const OPERATION_NEEDS: Readonly<Record<string, Needs>> = {
  // Grants: reading them is every key's (a scoped key lists its own); making and changing them is administration.
  create_agent_account: 'admin',
  delete_grant: 'admin',
  get_grant: 'any',
  list_grants: 'any',
  update_grant: 'admin',
  suspend_grant: 'admin',
  resume_grant: 'admin',
  // Mail: reading, organising (flags, folders, deleting), sending.
  create_folder: write,
  delete_folder: write,
  get_folder: read,
  list_folders: read,
  update_folder: write,
  clean_messages: read,
  delete_message: write,
  get_attachment: read,
  get_attachment_metadata: read,
  get_message: read,
  list_messages: read,
  wait_for_message: read,
  update_message: write,
  read_attachment: read,
  compose_message: read,
  compose_message_reply: read,
  get_message_engagement: read,
  get_scheduled_message: read,
  list_scheduled_messages: read,
  send_transactional_message: send,
  send_message: send,
  stop_scheduled_message: send,
  create_draft: drafts,
  delete_draft: drafts,
  get_draft: read,
  list_drafts: read,
  send_draft: send,
  update_draft: drafts,
  delete_thread: write,
  get_thread: read,
  list_threads: read,
  update_thread: write,
  claim_thread: send,
  // Follow-ups (issue 40): asking for one and cancelling it are sends; reading them is reading mail.
  create_follow_up: send,
  list_follow_ups: read,
  get_follow_up: read,
  cancel_follow_up: send,
  release_thread: send,
  complete_attachment_upload: [drafts, send],
  create_attachment_upload: [drafts, send],
  // Calendars and contacts.
  find_availability: 'calendar.read',
  get_free_busy: 'calendar.read',
  create_calendar: 'calendar.write',
  delete_calendar: 'calendar.write',
  get_calendar: 'calendar.read',
  list_calendars: 'calendar.read',
  update_calendar: 'calendar.write',
  create_event: 'calendar.write',
  // Tentative holds (issue 40): a hold reads and writes calendars; a key reaches one through its organizer grant.
  create_hold: 'calendar.write',
  get_hold: 'calendar.read',
  confirm_hold: 'calendar.write',
  release_hold: 'calendar.write',
  // The test clock (issue 40) of a test-mode application: reading it is every key's; moving it runs the
  // application's due work (sends among it), so it is administration.
  get_test_clock: 'any',
  advance_test_clock: 'admin',
  delete_event: 'calendar.write',
  get_event: 'calendar.read',
  list_events: 'calendar.read',
  list_import_events: 'calendar.read',
  send_rsvp: 'calendar.write',
  update_event: 'calendar.write',
  create_contact: 'contacts.write',
  delete_contact: 'contacts.write',
  get_contact: 'contacts.read',
  list_contact_groups: 'contacts.read',
  list_contacts: 'contacts.read',
  update_contact: 'contacts.write',
  // Webhooks.
  // Any one of these; the stream then carries only the event types the key's permissions cover (event-stream.ts).
  stream_events: ['mail.read', 'calendar.read', 'contacts.read', 'webhooks.manage', 'approvals.decide'],
  create_webhook: 'webhooks.manage',
  delete_webhook: 'webhooks.manage',
  get_webhook_ip_addresses: 'webhooks.manage',
  get_webhook: 'webhooks.manage',
  list_webhooks: 'webhooks.manage',
  list_webhook_deliveries: 'webhooks.manage',
  retry_webhook_delivery: 'webhooks.manage',
  rotate_webhook_secret: 'webhooks.manage',
  update_webhook: 'webhooks.manage',
  // Keys.
  create_api_key: 'keys.manage',
  delete_api_key: 'keys.manage',
  get_api_key: 'keys.manage',
  list_api_keys: 'keys.manage',
  get_current_api_key: 'any',
  // Administration: domains, connectors, the application, policies, rules, lists, workspaces, suppressions.
  create_domain: 'admin',
  delete_domain: 'admin',
  get_domain_verification_info: 'admin',
  get_domain: 'admin',
  list_domain_dmarc_reports: 'admin',
  list_domain_sending_days: 'admin',
  list_domains: 'admin',
  update_domain: 'admin',
  verify_domain: 'admin',
  create_connector: 'admin',
  create_connector_credential: 'admin',
  delete_connector: 'admin',
  delete_connector_credential: 'admin',
  get_connector: 'admin',
  get_connector_credential: 'admin',
  list_connectors: 'admin',
  list_connector_credentials: 'admin',
  update_connector: 'admin',
  update_connector_put: 'admin',
  update_connector_credential: 'admin',
  // Hosted OAuth: a token's information is the application's; detecting a provider reveals nothing of it.
  get_token_info: 'admin',
  detect_provider: 'any',
  create_redirect_uri: 'admin',
  delete_redirect_uri: 'admin',
  get_application: 'admin',
  get_redirect_uri: 'admin',
  list_redirect_uris: 'admin',
  update_application: 'admin',
  update_redirect_uri: 'admin',
  add_list_items: 'admin',
  auto_group_workspaces: 'admin',
  create_list: 'admin',
  create_policy: 'admin',
  create_rule: 'admin',
  create_workspace: 'admin',
  delete_list: 'admin',
  delete_policy: 'admin',
  delete_rule: 'admin',
  delete_workspace: 'admin',
  get_list: 'admin',
  get_policy: 'admin',
  get_rule: 'admin',
  get_workspace: 'admin',
  list_list_items: 'admin',
  list_lists: 'admin',
  list_policies: 'admin',
  list_rule_evaluations: 'admin',
  list_rules: 'admin',
  list_workspaces: 'admin',
  manual_assign_workspace: 'admin',
  remove_list_items: 'admin',
  update_list: 'admin',
  update_policy: 'admin',
  update_rule: 'admin',
  update_workspace: 'admin',
  add_suppression: 'admin',
  list_suppressions: 'admin',
  list_delivery_reports: 'admin',
  remove_suppression: 'admin',
  // The access log: who called what (a key narrower than the application reads it only with a grant_id it reaches).
  list_access_log: 'admin',
  // The overview (docs/dashboard.md): every key; each figure is of its reach, null outside its permissions.
  get_overview: 'any',
  // Oversight (docs/oversight.md): approvals.decide alone reads and decides held sends and reviews in its scope.
  list_approvals: 'approvals.decide',
  get_approval: 'approvals.decide',
  approve_approval: 'approvals.decide',
  reject_approval: 'approvals.decide',
  list_send_reviews: 'approvals.decide',
  mark_send_review: 'approvals.decide',
};

/**
 * Operations without a grant in their input that a key narrower than the application may still call: each shows
 * only what the key reaches (the grants it lists, the participants it finds, the keys it made). Every other
 * operation without a grant acts on the application's own objects (webhooks, domains, policies, …), which such a
 * key does not reach.
 */
export const SCOPED_BY_THEMSELVES: ReadonlySet<string> = new Set([
  'list_grants',
  'find_availability',
  'create_api_key',
  'delete_api_key',
  'get_api_key',
  'list_api_keys',
  'get_current_api_key',
  'list_approvals',
  'get_approval',
  'approve_approval',
  'reject_approval',
  'list_send_reviews',
  'mark_send_review',
  'stream_events',
  'get_overview',
  // A hold's organizer grant is checked against the key by the hold service (404 outside it).
  'create_hold',
  'get_hold',
  'confirm_hold',
  'release_hold',
  // The time of the key's own application, which any key may read.
  'get_test_clock',
]);

/** The permissions any one of which lets a key call `operation`; empty when every key may. Throws for an unknown one. */
export function permissionsFor(operation: string): readonly Permission[] {
  const needs = OPERATION_NEEDS[operation];
  if (needs === undefined)
    throw new Error(`Operation ${operation} has no entry in OPERATION_NEEDS (operations/permissions.ts)`);
  if (needs === 'any') return [];
  return typeof needs === 'string' ? [needs] : needs;
}
