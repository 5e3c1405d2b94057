/**
 * @module outbound/provenance
 * Who made a send (issue 36): the key, the face, the MCP client and session, the tool and the request, stored with
 * the send (the outbound record, the scheduled send) and shown as `provenance` on the sent message and in its
 * `message.send_success` / `message.send_failed` notifications. `approval_id` waits for the oversight issue.
 */
import type { Principal } from '../access.js';
import type { StoredProvenance } from '../../storage/schema/outbound.js';
import type { SendContext } from './contracts.js';

/** The provenance of a send made by `principal` in `context`. Pure. */
export function provenanceOf(principal: Principal, context: SendContext): StoredProvenance {
  const { client } = context;
  return {
    api_key_id: principal.key?.id ?? null,
    api_key_name: principal.key?.name ?? null,
    principal: principal.via,
    face: context.face ?? null,
    client: client
      ? { name: client.name ?? null, version: client.version ?? null, session: client.session ?? null }
      : null,
    tool: context.tool ?? null,
    request_id: context.requestId ?? null,
    approval_id: null,
  };
}
