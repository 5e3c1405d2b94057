/**
 * @module operations/authorize
 * Whether a principal may run an operation on this input (issue 36), decided before the handler runs, the same on
 * every face: a missing permission is a 403 naming it; a grant outside the key's scope, or an object of the
 * application a narrower key does not reach, is a 404 worded as for an unknown id (nothing leaks its existence).
 */
import type { z } from 'zod';
import type { Permission, Principal } from '../access.js';
import type { Core } from '../core-types.js';
import { AppError, notFound } from '../errors.js';
import { SCOPED_BY_THEMSELVES, permissionsFor } from './permissions.js';

/** What authorization reads of an operation (its definition is ./define-operation.ts, which calls this module). */
interface Guarded {
  name: string;
  input: z.ZodObject;
  http?: { path: string } | undefined;
}

/** Whether the principal holds a permission that lets it call the operation (its scope aside). Pure. */
export function mayCall(principal: Pick<Principal, 'permissions'>, operation: Pick<Guarded, 'name'>): boolean {
  return missingPermission(principal, operation.name) === undefined;
}

/** The permission the principal lacks for the operation, named for the error; undefined when it has one. */
function missingPermission(principal: Pick<Principal, 'permissions'>, operation: string): Permission | undefined {
  const held = principal.permissions;
  if (!held) return undefined;
  const needed = permissionsFor(operation);
  if (needed.length === 0 || needed.some((permission) => held.has(permission))) return undefined;
  return needed[0];
}

/** The 403 of a missing permission, in the Nylas error shape; `details.permission` names it. */
export function permissionError(permission: Permission, operation: string): AppError {
  const others = permissionsFor(operation).filter((other) => other !== permission);
  return new AppError(
    'forbidden',
    `This API key lacks the permission ${permission}${others.length > 0 ? ` (or ${others.join(', ')})` : ''}, needed by ${operation}.`,
    { permission },
  );
}

/**
 * Refuses the call when the principal lacks the permission or the input (not yet validated: only its grant and path
 * ids are read, as strings) reaches outside its scope.
 */
export async function authorize(
  core: Core,
  operation: Guarded,
  rawInput: unknown,
  principal: Principal,
): Promise<void> {
  const missing = missingPermission(principal, operation.name);
  if (missing) throw permissionError(missing, operation.name);
  if (!principal.grantIds) return;
  const input = (typeof rawInput === 'object' && rawInput !== null ? rawInput : {}) as Record<string, unknown>;
  // A grant in the path is the object acted on; an optional grant_id filter of an application-wide read is not.
  const onGrant = operation.http ? operation.http.path.includes(':grant_id') : 'grant_id' in operation.input.shape;
  if (onGrant) {
    if (typeof input.grant_id !== 'string')
      throw new AppError('invalid_request', 'grant_id: required (a string) for a key scoped to some grants.');
    await assertGrantReached(core, principal, input.grant_id);
  } else if (!SCOPED_BY_THEMSELVES.has(operation.name)) {
    throw outsideScope(operation, input);
  }
}

/**
 * A grant reference (id or email address) the principal reaches, or the 404 an unknown grant gets. A key scoped to
 * grants pays one lookup only when it names a grant by address.
 */
export async function assertGrantReached(core: Core, principal: Principal, ref: string): Promise<void> {
  const reach = principal.grantIds;
  if (!reach || reach.has(ref)) return;
  const grant = await core.accounts.grants.find(principal, ref).catch(() => undefined);
  if (!grant || !reach.has(grant.id)) throw notFound('Grant', ref);
}

/**
 * Why a key narrower than the application may not call an operation on the application's own objects: a 404 for
 * one object (named as its own route would name an unknown one), a 403 for the collection.
 */
function outsideScope(operation: Guarded, input: Record<string, unknown>): AppError {
  const param = /:([a-z_]+)(?!.*:[a-z_]+)/.exec(operation.http?.path ?? '')?.[1];
  if (param !== undefined) {
    const noun = param.replace(/_(id|name)$/, '').replace(/_/g, ' ');
    return notFound(noun.charAt(0).toUpperCase() + noun.slice(1), String(input[param]));
  }
  return new AppError(
    'forbidden',
    `${operation.name} acts on the application's own objects: it needs a key scoped to the whole application.`,
    { scope: 'application' },
  );
}
