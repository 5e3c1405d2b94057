/**
 * @module admin/list-service
 * Lists (`/v3/lists`) of domains, top-level domains or addresses that rules name in `in_list` conditions, and
 * their items. Items are lower-cased and trimmed and must fit the list's type; a call with one item that does not
 * changes nothing. Every change of items updates `items_count`, bumps `version` and `updated_at`, in the same
 * transaction (the enforcement cache reloads a list's items only when its version moved). A list that rules name
 * cannot be deleted: the answer is a 409 naming the rules.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { unixSeconds } from '../time.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, invalid } from '../errors.js';
import {
  HOST_NAME_PATTERN,
  type AgentList,
  type AgentListItem,
  type CreateListInput,
  type ListItemsChangeInput,
  type PageInput,
  type UpdateListInput,
} from '../schemas/admin.js';
import type { ListService } from './contracts.js';
import { adminWriter, requireOwnedRow } from './ownership.js';
import { pageOfOwned, pageOfRows, pageQuery } from './paging.js';
import { listIdsOf } from './rule-service.js';
import { touchListItems, updateListDetails } from './list-store.js';

type ListRow = typeof tables.lists.$inferSelect;
type ListType = ListRow['type'];

/** Rows per INSERT of items (SQLite's bound-parameter limit). */
const ITEM_BATCH = 200;

/** A row in wire form. */
export function toList(row: ListRow): AgentList {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    type: row.type,
    items_count: row.itemsCount,
    application_id: row.applicationId,
    organization_id: row.applicationId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const TLD_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const AddressSchema = z.email();

/** Whether a (lower-cased, trimmed) value fits a list type. */
export function fitsListType(type: ListType, value: string): boolean {
  switch (type) {
    case 'domain':
      return HOST_NAME_PATTERN.test(value);
    case 'tld':
      return TLD_PATTERN.test(value);
    case 'address':
      return value.length <= 320 && AddressSchema.safeParse(value).success;
  }
}

const WHAT_FITS: Record<ListType, string> = {
  domain: 'a domain name such as example.com',
  tld: 'one label such as com',
  address: 'an email address',
};

/** Lower-cases, trims and de-duplicates items, and checks each against the list's type (a 400 naming the misfits). */
function normalizeItems(type: ListType, items: readonly string[]): string[] {
  const values = [...new Set(items.map((item) => item.trim().toLowerCase()))];
  const misfits = values.filter((value) => !fitsListType(type, value));
  if (misfits.length > 0) {
    const shown = misfits
      .slice(0, 5)
      .map((value) => JSON.stringify(value))
      .join(', ');
    throw invalid(
      'items',
      `a ${type} list holds ${WHAT_FITS[type]}; ${misfits.length} item(s) do not: ${shown}${misfits.length > 5 ? ', …' : ''}. Nothing was changed.`,
    );
  }
  return values;
}

/** Creates the list service; `invalidate` runs after every write (enforcement caches). */
export function createListService({ db, clock, newId }: CoreDeps, invalidate: () => void): ListService {
  const now = () => unixSeconds(clock.now());
  const write = adminWriter(db, invalidate);

  return {
    /** The application's lists, oldest first, cursor-paginated. */
    async list(principal: Principal, input: PageInput): Promise<{ data: AgentList[]; next_cursor?: string }> {
      return pageOfOwned(db.orm, tables.lists, principal.applicationId, input, toList);
    },

    /** One list. */
    async find(principal: Principal, listId: string): Promise<AgentList> {
      return toList(await requireOwnedRow(db.orm, 'list', principal.applicationId, listId));
    },

    /** Creates an empty list. */
    async create(principal: Principal, input: CreateListInput): Promise<AgentList> {
      const at = now();
      const [row] = await write((tx) =>
        tx
          .insert(tables.lists)
          .values({
            id: newId(),
            applicationId: principal.applicationId,
            name: input.name,
            description: input.description ?? null,
            type: input.type,
            createdAt: at,
            updatedAt: at,
          })
          .returning(),
      );
      return toList(row!);
    },

    /** Renames or re-describes a list; its type cannot change. */
    async update(principal: Principal, input: UpdateListInput): Promise<AgentList> {
      return toList(
        await write(async (tx) => {
          const current = await requireOwnedRow(tx, 'list', principal.applicationId, input.list_id);
          if (input.type !== undefined && input.type !== current.type)
            throw invalid(
              'type',
              `a list's type cannot change (this list holds ${current.type} items); create another list.`,
            );
          return updateListDetails(tx, current.id, { name: input.name, description: input.description }, now());
        }),
      );
    },

    /** Deletes a list and its items; a 409 naming the rules when rules still name it. */
    async destroy(principal: Principal, listId: string): Promise<void> {
      await write(async (tx) => {
        const current = await requireOwnedRow(tx, 'list', principal.applicationId, listId);
        const rules = await tx
          .select({ id: tables.rules.id, conditions: tables.rules.conditions })
          .from(tables.rules)
          .where(eq(tables.rules.applicationId, principal.applicationId));
        const naming = rules.filter((rule) => listIdsOf(rule.conditions).includes(current.id)).map((rule) => rule.id);
        if (naming.length > 0) {
          throw new AppError(
            'conflict',
            `list ${JSON.stringify(current.id)} is named by the in_list conditions of rule(s) ${naming.map((id) => JSON.stringify(id)).join(', ')}; change or delete those rules first.`,
            {
              rule_ids: naming,
            },
          );
        }
        await tx.delete(tables.lists).where(eq(tables.lists.id, current.id));
      });
    },

    /** A page of a list's items, oldest first. */
    async listItems(
      principal: Principal,
      input: PageInput & { list_id: string },
    ): Promise<{ data: AgentListItem[]; next_cursor?: string }> {
      const list = await requireOwnedRow(db.orm, 'list', principal.applicationId, input.list_id);
      const page = pageQuery(tables.listItems, eq(tables.listItems.listId, list.id), input);
      const rows = await db.orm
        .select()
        .from(tables.listItems)
        .where(page.where)
        .orderBy(...page.orderBy)
        .limit(page.fetch);
      return pageOfRows(rows, page.limit, (row) => ({
        id: row.id,
        list_id: row.listId,
        value: row.value,
        created_at: row.createdAt,
      }));
    },

    /** Adds items (values already there are ignored); all of them fit the list's type, or nothing is added. */
    async addItems(principal: Principal, input: ListItemsChangeInput): Promise<AgentList> {
      return toList(
        await write(async (tx) => {
          const list = await requireOwnedRow(tx, 'list', principal.applicationId, input.list_id);
          const values = normalizeItems(list.type, input.items);
          const at = now();
          let added = 0;
          for (let index = 0; index < values.length; index += ITEM_BATCH) {
            const inserted = await tx
              .insert(tables.listItems)
              .values(
                values
                  .slice(index, index + ITEM_BATCH)
                  .map((value) => ({ id: newId(), listId: list.id, value, createdAt: at })),
              )
              .onConflictDoNothing()
              .returning({ id: tables.listItems.id });
            added += inserted.length;
          }
          return added > 0 ? touchListItems(tx, list.id, now()) : list;
        }),
      );
    },

    /** Removes items (values not in the list are ignored). */
    async removeItems(principal: Principal, input: ListItemsChangeInput): Promise<AgentList> {
      return toList(
        await write(async (tx) => {
          const list = await requireOwnedRow(tx, 'list', principal.applicationId, input.list_id);
          const values = [...new Set(input.items.map((item) => item.trim().toLowerCase()))];
          let removed = 0;
          for (let index = 0; index < values.length; index += ITEM_BATCH) {
            const deleted = await tx
              .delete(tables.listItems)
              .where(
                and(
                  eq(tables.listItems.listId, list.id),
                  inArray(tables.listItems.value, values.slice(index, index + ITEM_BATCH)),
                ),
              )
              .returning({ id: tables.listItems.id });
            removed += deleted.length;
          }
          return removed > 0 ? touchListItems(tx, list.id, now()) : list;
        }),
      );
    },
  };
}
