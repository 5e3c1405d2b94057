/**
 * @module operations/writable
 * The one place writes on a grant meet oversight (issue 37, docs/oversight.md "The kill switch"): an operation that
 * needs a write permission on a grant (drafts, calendar, contacts, message and folder changes) is refused while the
 * grant is suspended, naming the reason; drafts, calendar and contact writes are also refused under `read_only`,
 * naming the mode. Sends are not decided here: the send gate (src/oversight) runs on every send, whatever the face.
 */
import type { Permission, Principal } from '../access.js';
import type { Core } from '../core-types.js';
import { suspendedError } from '../oversight/index.js';
import { OPERATION_NEEDS } from './permissions.js';

/** What each write permission is called in a refusal, and whether `read_only` refuses it too. */
const WRITES: Partial<Record<Permission, { what: string; readOnly: boolean }>> = {
  'drafts.write': { what: 'a draft write', readOnly: true },
  'calendar.write': { what: 'a calendar write', readOnly: true },
  'contacts.write': { what: 'a contact write', readOnly: true },
  'mail.write': { what: 'a message or folder change', readOnly: false },
};

/** The write an operation makes on a grant, by its permissions; undefined for a read, a send or an admin call. */
export function writeOf(operation: string): { what: string; readOnly: boolean } | undefined {
  const needs = OPERATION_NEEDS[operation];
  // An embedder's own operation (outside the table) and one every key may call write nothing here.
  if (needs === undefined || needs === 'any') return undefined;
  let found: { what: string; readOnly: boolean } | undefined;
  for (const permission of typeof needs === 'string' ? [needs] : needs) {
    const write = WRITES[permission];
    if (write && (!found || (write.readOnly && !found.readOnly))) found = write;
  }
  return found;
}

/**
 * Refuses a write on a suspended grant (the reason named) or, for drafts, calendar and contacts, on a `read_only`
 * one. One primary-key read of the grant per write; nothing for reads.
 */
export async function assertWritable(
  core: Core,
  operation: string,
  input: unknown,
  principal: Principal,
): Promise<void> {
  const write = writeOf(operation);
  const grantId = (input as { grant_id?: unknown } | null)?.grant_id;
  if (!write || typeof grantId !== 'string') return;
  const grant = await core.accounts.grants.require(principal, grantId);
  if (write.readOnly) return core.oversight.gate.assertWritable(grant, write.what);
  if (grant.suspendedAt != null) throw suspendedError(grant.suspendedReason);
}
