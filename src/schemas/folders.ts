/**
 * @module schemas/folders
 * Folders on the wire, as in Nylas v3 `models/folders.ts`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, LimitSchema, PageTokenSchema } from './common.js';

const HexColorSchema = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'a colour such as #0099EE');

export const FolderSchema = z
  .object({
    id: z.string().describe('Folder id; system folders use their role (inbox, sent, drafts, trash, junk, archive)'),
    grant_id: z.string(),
    object: z.literal('folder'),
    name: z.string(),
    system_folder: z
      .boolean()
      .describe('True for the six folders every Agent Account has; they cannot be renamed or deleted'),
    attributes: z.array(z.string()).describe('IMAP-style special-use flags such as \\Inbox'),
    parent_id: z.string().optional(),
    text_color: z.string().optional(),
    background_color: z.string().optional(),
    total_count: z.number().int().describe('Messages in the folder'),
    unread_count: z.number().int().describe('Unread messages in the folder'),
    child_count: z.number().int().describe('Folders whose parent is this one'),
  })
  .meta({ id: 'Folder' });
export type Folder = z.infer<typeof FolderSchema>;

export const ListFoldersInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  parent_id: IdSchema.optional().describe('Only folders under this one'),
});
export type ListFoldersInput = z.infer<typeof ListFoldersInputSchema>;

export const FolderRefInputSchema = z.object({ grant_id: GrantIdSchema, folder_id: IdSchema });

export const CreateFolderInputSchema = z.object({
  grant_id: GrantIdSchema,
  name: z.string().trim().min(1).max(1024).describe('Folder name, unique in the mailbox'),
  parent_id: IdSchema.optional().describe('Parent folder id'),
  text_color: HexColorSchema.optional().describe('Text colour, #RRGGBB'),
  background_color: HexColorSchema.optional().describe('Background colour, #RRGGBB'),
});
export type CreateFolderInput = z.infer<typeof CreateFolderInputSchema>;

export const UpdateFolderInputSchema = z.object({
  grant_id: GrantIdSchema,
  folder_id: IdSchema,
  name: z.string().trim().min(1).max(1024).optional().describe('New name (system folders cannot be renamed)'),
  parent_id: IdSchema.optional(),
  text_color: HexColorSchema.optional(),
  background_color: HexColorSchema.optional(),
});
export type UpdateFolderInput = z.infer<typeof UpdateFolderInputSchema>;
