import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { chooseWorkspace, type PlacementWorkspace } from '../../src/grants/placement.js';

const workspaces: PlacementWorkspace[] = [
  { id: 'ws_default', applicationId: 'app_1', domain: null, autoGroup: false, isDefault: true },
  { id: 'ws_sales', applicationId: 'app_1', domain: 'sales.example.com', autoGroup: true, isDefault: false },
  {
    id: 'ws_support_manual',
    applicationId: 'app_1',
    domain: 'support.example.com',
    autoGroup: false,
    isDefault: false,
  },
  { id: 'ws_other_default', applicationId: 'app_2', domain: null, autoGroup: false, isDefault: true },
  { id: 'ws_other_grouped', applicationId: 'app_2', domain: 'other.example.com', autoGroup: true, isDefault: false },
];

const place = (email: string, requestedWorkspaceId?: string, applicationId = 'app_1') =>
  chooseWorkspace({ applicationId, email, requestedWorkspaceId, workspaces });

describe('workspace placement of a new Agent Account', () => {
  it('1. an explicit workspace_id of the same application wins over auto grouping', () => {
    expect(place('bot@sales.example.com', 'ws_support_manual')).toBe('ws_support_manual');
    expect(place('bot@sales.example.com', 'ws_default')).toBe('ws_default');
  });

  it('1. rejects an explicit workspace_id of another application as a 400 naming workspace_id', () => {
    let caught: unknown;
    try {
      place('bot@other.example.com', 'ws_other_grouped');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('invalid_request');
    expect((caught as AppError).message).toMatch(/^workspace_id: /);
    expect(() => place('bot@sales.example.com', 'ws_missing')).toThrow(/workspace_id/);
  });

  it('2. without workspace_id, an auto_group workspace whose domain is the address domain (case-insensitive)', () => {
    expect(place('bot@sales.example.com')).toBe('ws_sales');
    expect(place('Bot@SALES.Example.com')).toBe('ws_sales');
  });

  it('2. ignores workspaces without auto_group, of other domains, or of other applications', () => {
    expect(place('bot@support.example.com')).toBe('ws_default');
    expect(place('bot@sub.sales.example.com')).toBe('ws_default');
    expect(place('bot@other.example.com')).toBe('ws_default');
  });

  it('3. falls back to the application default workspace', () => {
    expect(place('bot@anything.example.net')).toBe('ws_default');
    expect(place('bot@other.example.com', undefined, 'app_2')).toBe('ws_other_grouped');
    expect(place('bot@anything.example.net', undefined, 'app_2')).toBe('ws_other_default');
  });

  it('fails loudly when the application has no default workspace', () => {
    expect(() =>
      chooseWorkspace({
        applicationId: 'app_3',
        email: 'a@b.example.com',
        requestedWorkspaceId: undefined,
        workspaces,
      }),
    ).toThrow(/no default workspace/);
  });
});
