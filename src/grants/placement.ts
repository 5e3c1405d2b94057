/**
 * @module grants/placement
 * Where a new Agent Account goes (spec, "Placement of a new Agent Account in a workspace"). Pure.
 */
import { AppError } from '../errors.js';

/** The workspace fields placement looks at. */
export interface PlacementWorkspace {
  id: string;
  applicationId: string;
  domain: string | null;
  autoGroup: boolean;
  isDefault: boolean;
}

/**
 * 1. An explicit `workspace_id` wins, if it belongs to the same application (else the request is rejected).
 * 2. Else a workspace with `auto_group` whose domain equals the address's domain.
 * 3. Else the application's default workspace.
 */
export function chooseWorkspace(input: {
  applicationId: string;
  email: string;
  requestedWorkspaceId: string | undefined;
  workspaces: readonly PlacementWorkspace[];
}): string {
  const own = input.workspaces.filter((workspace) => workspace.applicationId === input.applicationId);
  if (input.requestedWorkspaceId !== undefined) {
    const chosen = own.find((workspace) => workspace.id === input.requestedWorkspaceId);
    if (!chosen) {
      throw new AppError(
        'invalid_request',
        `workspace_id: workspace ${JSON.stringify(input.requestedWorkspaceId)} does not belong to this application.`,
        {
          field: 'workspace_id',
        },
      );
    }
    return chosen.id;
  }
  const domain = input.email.slice(input.email.lastIndexOf('@') + 1).toLowerCase();
  const grouped = own.find((workspace) => workspace.autoGroup && workspace.domain?.toLowerCase() === domain);
  if (grouped) return grouped.id;
  const fallback = own.find((workspace) => workspace.isDefault);
  if (!fallback) throw new AppError('internal', 'The application has no default workspace.');
  return fallback.id;
}
