/**
 * Folder operations.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  CreateFolderInputSchema,
  FolderRefInputSchema,
  FolderSchema,
  ListFoldersInputSchema,
  UpdateFolderInputSchema,
} from '../schemas/folders.js';
import { fieldText } from './agent.js';
import { defineOperation } from './define-operation.js';

export const listFolders = defineOperation({
  name: 'list_folders',
  title: 'List folders',
  description: 'Folders with message and unread counts, inbox first. Filter list_messages with in: a folder id.',
  input: ListFoldersInputSchema,
  output: pageOf(FolderSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/folders', envelope: 'list' },
  tool: true,
  run: (core, input, { principal }) => core.mail.folders.list(principal, input),
});

export const getFolder = defineOperation({
  name: 'get_folder',
  title: 'Get a folder',
  description: 'Returns one folder with its message and unread counts.',
  input: FolderRefInputSchema,
  output: FolderSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/folders/:folder_id' },
  tool: false,
  run: (core, input, { principal }) => core.mail.folders.find(principal, input),
});

export const createFolder = defineOperation({
  name: 'create_folder',
  title: 'Create a folder',
  description: 'Creates a folder (names are unique). Move messages into it with update_message.',
  input: CreateFolderInputSchema,
  output: FolderSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/folders' },
  tool: true,
  agent: {
    omit: ['text_color', 'background_color'],
    headline: (folder) =>
      `Created folder ${fieldText(folder.id ?? '')}${folder.name ? ` (${JSON.stringify(folder.name)})` : ''}`,
  },
  run: (core, input, { principal }) => core.mail.folders.create(principal, input),
});

export const updateFolder = defineOperation({
  name: 'update_folder',
  title: 'Update a folder',
  description: 'Renames, moves or recolours a folder. System folders can be recoloured but not renamed or moved.',
  input: UpdateFolderInputSchema,
  output: FolderSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/folders/:folder_id' },
  tool: false,
  run: (core, input, { principal }) => core.mail.folders.update(principal, input),
});

export const deleteFolder = defineOperation({
  name: 'delete_folder',
  title: 'Delete a folder',
  description: 'Deletes a folder you made. System folders cannot be deleted.',
  input: FolderRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/folders/:folder_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.mail.folders.destroy(principal, input);
    return {};
  },
});
