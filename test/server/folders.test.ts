import { type Folder } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

const SYSTEM = ['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive'];

describe('folders', () => {
  let service: TestService;
  let grantId: string;
  const email = 'folders@folders.agentpost.localhost';

  beforeAll(async () => {
    service = await startTestService();
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Folders', domain_address: 'folders.agentpost.localhost' },
    });
    grantId = (
      await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } })
    ).data.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  it('lists the six system folders first, in order, with their counts and attributes', async () => {
    const listed = await service.nylas.folders.list({ identifier: grantId });
    expect(listed.data.map((folder) => folder.id)).toEqual(SYSTEM);
    expect(listed.data[0]).toEqual({
      id: 'inbox',
      grantId,
      object: 'folder',
      name: 'inbox',
      systemFolder: true,
      attributes: ['\\Inbox'],
      totalCount: 0,
      unreadCount: 0,
      childCount: 0,
    });
    expect(listed.data.map((folder) => folder.attributes)).toEqual([
      ['\\Inbox'],
      ['\\Sent'],
      ['\\Drafts'],
      ['\\Trash'],
      ['\\Junk'],
      ['\\Archive'],
    ]);
    const raw = await request(service.url, 'GET', `/v3/grants/${encodeURIComponent(email)}/folders`, {
      key: service.apiKey,
    });
    expect(raw.status).toBe(200);
    expect(raw.body.next_cursor).toBeUndefined();
    expect(raw.body.data[1]).toMatchObject({
      id: 'sent',
      grant_id: grantId,
      system_folder: true,
      total_count: 0,
      unread_count: 0,
      child_count: 0,
    });
  });

  describe('custom folders', () => {
    let projects: Folder;

    it('are created, found, renamed, recoloured and listed after the system folders', async () => {
      projects = (
        await service.nylas.folders.create({
          identifier: grantId,
          requestBody: { name: 'Projects', textColor: '#112233' },
        })
      ).data;
      expect(projects).toMatchObject({
        id: expect.any(String),
        grantId,
        name: 'Projects',
        systemFolder: false,
        attributes: [],
        textColor: '#112233',
        totalCount: 0,
      });
      expect((await service.nylas.folders.find({ identifier: grantId, folderId: projects.id })).data).toEqual(projects);

      const renamed = await service.nylas.folders.update({
        identifier: grantId,
        folderId: projects.id,
        requestBody: { name: 'Work', backgroundColor: '#ABCDEF' },
      });
      expect(renamed.data).toMatchObject({
        id: projects.id,
        name: 'Work',
        textColor: '#112233',
        backgroundColor: '#ABCDEF',
      });

      const names = (await service.nylas.folders.list({ identifier: grantId })).data.map((folder) => folder.name);
      expect(names).toEqual([...SYSTEM, 'Work']);
    });

    it('nest under a parent, which counts its children and filters by parent_id', async () => {
      const child = (
        await service.nylas.folders.create({
          identifier: grantId,
          requestBody: { name: 'Work/Clients', parentId: projects.id },
        })
      ).data;
      expect(child.parentId).toBe(projects.id);
      expect((await service.nylas.folders.find({ identifier: grantId, folderId: projects.id })).data.childCount).toBe(
        1,
      );
      const children = await service.nylas.folders.list({
        identifier: grantId,
        queryParams: { parentId: projects.id },
      });
      expect(children.data.map((folder) => folder.id)).toEqual([child.id]);

      const badParent = await sdkError(
        service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Orphan', parentId: 'missing' } }),
      );
      expect(badParent.statusCode).toBe(400);
      expect(badParent.message).toContain('parent_id');
      const selfParent = await sdkError(
        service.nylas.folders.update({
          identifier: grantId,
          folderId: projects.id,
          requestBody: { parentId: projects.id },
        }),
      );
      expect(selfParent.statusCode).toBe(400);
      const cycle = await sdkError(
        service.nylas.folders.update({
          identifier: grantId,
          folderId: projects.id,
          requestBody: { parentId: child.id },
        }),
      );
      expect(cycle.statusCode).toBe(400);
      expect(cycle.message).toContain('parent_id');

      // Deleting the parent keeps the child, now at the top level.
      await service.nylas.folders.destroy({ identifier: grantId, folderId: projects.id });
      expect(
        (await sdkError(service.nylas.folders.find({ identifier: grantId, folderId: projects.id }))).statusCode,
      ).toBe(404);
      const orphan = (await service.nylas.folders.find({ identifier: grantId, folderId: child.id })).data;
      expect(orphan.parentId).toBeUndefined();
      await service.nylas.folders.destroy({ identifier: grantId, folderId: child.id });
      expect((await service.nylas.folders.list({ identifier: grantId })).data.map((folder) => folder.id)).toEqual(
        SYSTEM,
      );
    });

    it('have unique names in a mailbox: 409 on create or rename to a taken name', async () => {
      const a = (await service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Unique A' } })).data;
      await service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Unique B' } });
      const duplicate = await sdkError(
        service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Unique A' } }),
      );
      expect(duplicate.statusCode).toBe(409);
      expect(duplicate.message).toContain('name');
      const system = await sdkError(
        service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'inbox' } }),
      );
      expect(system.statusCode).toBe(409);
      const rename = await sdkError(
        service.nylas.folders.update({ identifier: grantId, folderId: a.id, requestBody: { name: 'Unique B' } }),
      );
      expect(rename.statusCode).toBe(409);
      expect((await service.nylas.folders.find({ identifier: grantId, folderId: a.id })).data.name).toBe('Unique A');
    });

    it('reject invalid fields with 400 naming them', async () => {
      for (const [body, field] of [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'Colour', text_color: 'red' }, 'text_color'],
      ] as const) {
        const response = await request(service.url, 'POST', `/v3/grants/${grantId}/folders`, {
          key: service.apiKey,
          body,
        });
        expect(response.status).toBe(400);
        expect(isErrorEnvelope(response.body)).toBe(true);
        expect(response.body.error.message).toContain(`${field}:`);
      }
    });
  });

  describe('system folders', () => {
    it('cannot be renamed, moved or deleted (400), but can be recoloured', async () => {
      const rename = await sdkError(
        service.nylas.folders.update({ identifier: grantId, folderId: 'inbox', requestBody: { name: 'Inbox 2' } }),
      );
      expect(rename.statusCode).toBe(400);
      expect(rename.message).toContain('system folder');
      const custom = (
        await service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Parent for move' } })
      ).data;
      const move = await sdkError(
        service.nylas.folders.update({ identifier: grantId, folderId: 'sent', requestBody: { parentId: custom.id } }),
      );
      expect(move.statusCode).toBe(400);
      const remove = await sdkError(service.nylas.folders.destroy({ identifier: grantId, folderId: 'trash' }));
      expect(remove.statusCode).toBe(400);
      expect(remove.message).toContain('system folder');

      const recoloured = await service.nylas.folders.update({
        identifier: grantId,
        folderId: 'inbox',
        requestBody: { name: 'inbox', textColor: '#000000' },
      });
      expect(recoloured.data).toMatchObject({ id: 'inbox', name: 'inbox', textColor: '#000000', systemFolder: true });
      const listed = (await service.nylas.folders.list({ identifier: grantId })).data.map((folder) => folder.id);
      expect(listed.slice(0, 6)).toEqual(SYSTEM);
    });
  });

  it('pages with limit and page_token over more folders than one page', async () => {
    const other = (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'pages@folders.agentpost.localhost' } },
      })
    ).data.id;
    const made: string[] = [];
    for (let index = 0; index < 9; index += 1) {
      made.push(
        (await service.nylas.folders.create({ identifier: other, requestBody: { name: `Folder ${index}` } })).data.id,
      );
    }
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await request(
        service.url,
        'GET',
        `/v3/grants/${other}/folders?limit=4${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
        { key: service.apiKey },
      );
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(4);
      seen.push(...page.body.data.map((folder: { id: string }) => folder.id));
      token = page.body.next_cursor;
      pages += 1;
    } while (token && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual([...SYSTEM, ...made]);

    // The SDK follows next_cursor itself.
    const viaSdk: string[] = [];
    for await (const page of service.nylas.folders.list({ identifier: other, queryParams: { limit: 5 } })) {
      viaSdk.push(...page.data.map((folder) => folder.id));
    }
    expect(viaSdk).toEqual([...SYSTEM, ...made]);

    const tooMany = await request(service.url, 'GET', `/v3/grants/${other}/folders?limit=201`, { key: service.apiKey });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain('limit:');
    const badToken = await request(service.url, 'GET', `/v3/grants/${other}/folders?page_token=xyz`, {
      key: service.apiKey,
    });
    expect(badToken.status).toBe(400);
    expect(badToken.body.error.message).toContain('page_token');
  });

  it('answers 404 for an unknown grant or folder', async () => {
    expect((await sdkError(service.nylas.folders.list({ identifier: 'no-such-grant' }))).statusCode).toBe(404);
    expect(
      (await sdkError(service.nylas.folders.find({ identifier: grantId, folderId: 'no-such-folder' }))).statusCode,
    ).toBe(404);
    expect(
      (await sdkError(service.nylas.folders.destroy({ identifier: grantId, folderId: 'no-such-folder' }))).statusCode,
    ).toBe(404);
  });
});
