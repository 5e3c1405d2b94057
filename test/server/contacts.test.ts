import type { Contact } from 'nylas';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

const DOMAIN = 'contacts.agentpost.localhost';

describe('contacts through the nylas SDK', () => {
  let service: TestService;
  let grantId: string;
  let ada: Contact;

  beforeAll(async () => {
    service = await startTestService();
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Contacts', domain_address: DOMAIN },
    });
    grantId = (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: `book@${DOMAIN}` } },
      })
    ).data.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  it('creates a contact with every kind of field and finds it', async () => {
    const created = await service.nylas.contacts.create({
      identifier: grantId,
      requestBody: {
        givenName: 'Ada',
        middleName: 'King',
        surname: 'Lovelace',
        nickname: 'Countess',
        birthday: '1815-12-10',
        companyName: 'Analytical Engines',
        jobTitle: 'Programmer',
        managerName: 'Charles Babbage',
        officeLocation: 'London',
        notes: 'First program',
        emails: [
          { email: 'Ada@Engines.example', type: 'work' },
          { email: 'ada@home.example', type: 'home' },
        ],
        phoneNumbers: [{ number: '+44 20 7946 0000', type: 'mobile' }],
        physicalAddresses: [
          { streetAddress: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'UK', type: 'home' },
        ],
        webPages: [{ url: 'https://engines.example/ada', type: 'work' }],
        imAddresses: [{ imAddress: 'ada@chat.example', type: 'other' }],
        groups: [{ id: 'mathematicians' } as never],
        picture: Buffer.from('fake image bytes').toString('base64'),
      },
    });
    ada = created.data;
    expect(ada).toEqual({
      id: expect.any(String),
      grantId,
      object: 'contact',
      displayName: 'Ada King Lovelace',
      givenName: 'Ada',
      middleName: 'King',
      surname: 'Lovelace',
      nickname: 'Countess',
      birthday: '1815-12-10',
      companyName: 'Analytical Engines',
      jobTitle: 'Programmer',
      managerName: 'Charles Babbage',
      officeLocation: 'London',
      notes: 'First program',
      source: 'address_book',
      emails: [
        { email: 'ada@engines.example', type: 'work' },
        { email: 'ada@home.example', type: 'home' },
      ],
      phoneNumbers: [{ number: '+44 20 7946 0000', type: 'mobile' }],
      physicalAddresses: [
        { streetAddress: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'UK', type: 'home' },
      ],
      webPages: [{ url: 'https://engines.example/ada', type: 'work' }],
      imAddresses: [{ imAddress: 'ada@chat.example', type: 'other' }],
      groups: [{ id: 'mathematicians' }],
    });
    expect(
      (await service.nylas.contacts.find({ identifier: grantId, contactId: ada.id, queryParams: {} })).data,
    ).toEqual(ada);
    const withPicture = await service.nylas.contacts.find({
      identifier: grantId,
      contactId: ada.id,
      queryParams: { profilePicture: true },
    });
    expect(Buffer.from(withPicture.data.picture!, 'base64').toString()).toBe('fake image bytes');
  });

  it("lists with the SDK's filters: email, phone_number, source and group", async () => {
    await service.nylas.contacts.create({
      identifier: grantId,
      requestBody: {
        givenName: 'Grace',
        surname: 'Hopper',
        emails: [{ email: 'grace@navy.example' }],
        phoneNumbers: [{ number: '555-0100' }],
      },
    });
    await service.core.contacts.collect(
      (await service.core.deps.db.orm.query.grants.findFirst({ where: eq(tables.grants.id, grantId) }))!,
      [
        { email: 'Alan@Turing.example', name: 'Alan Turing' },
        { email: `book@${DOMAIN}` },
        { email: 'grace@navy.example' },
      ],
    );
    // Contacts made within the same second may list in either order: compare sorted.
    const names = async (queryParams: Record<string, unknown>) =>
      (await service.nylas.contacts.list({ identifier: grantId, queryParams })).data
        .map((contact) => contact.displayName)
        .sort();
    expect(await names({})).toEqual(['Ada King Lovelace', 'Alan Turing', 'Grace Hopper']);
    expect(await names({ email: 'ADA@home.example' })).toEqual(['Ada King Lovelace']);
    expect(await names({ phoneNumber: '555-0100' })).toEqual(['Grace Hopper']);
    expect(await names({ source: 'inbox' })).toEqual(['Alan Turing']);
    expect(await names({ source: 'address_book' })).toEqual(['Ada King Lovelace', 'Grace Hopper']);
    expect(await names({ group: 'mathematicians', recurse: true })).toEqual(['Ada King Lovelace']);
    expect(await names({ email: 'nobody@nowhere.example' })).toEqual([]);
    const collected = (await service.nylas.contacts.list({ identifier: grantId, queryParams: { source: 'inbox' } }))
      .data[0]!;
    expect(collected.emails).toEqual([{ email: 'alan@turing.example' }]);

    const first = await request(service.url, 'GET', `/v3/grants/${grantId}/contacts?limit=2`, { key: service.apiKey });
    const second = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/contacts?limit=2&page_token=${first.body.next_cursor}`,
      { key: service.apiKey },
    );
    expect(first.body.data).toHaveLength(2);
    expect(second.body.next_cursor).toBeUndefined();
    expect(
      [...first.body.data, ...second.body.data].map((contact: { display_name: string }) => contact.display_name).sort(),
    ).toEqual(['Ada King Lovelace', 'Alan Turing', 'Grace Hopper']);
  });

  it('updates given fields (lists replace) and deletes, with outbox events', async () => {
    const updated = await service.nylas.contacts.update({
      identifier: grantId,
      contactId: ada.id,
      requestBody: { jobTitle: 'Mathematician', emails: [{ email: 'ada@new.example' }] },
    });
    expect(updated.data).toMatchObject({
      givenName: 'Ada',
      jobTitle: 'Mathematician',
      emails: [{ email: 'ada@new.example' }],
    });
    expect(
      (await service.nylas.contacts.list({ identifier: grantId, queryParams: { email: 'ada@home.example' } })).data,
    ).toEqual([]);
    await service.nylas.contacts.destroy({ identifier: grantId, contactId: ada.id });
    expect(
      (await sdkError(service.nylas.contacts.find({ identifier: grantId, contactId: ada.id, queryParams: {} })))
        .statusCode,
    ).toBe(404);
    const outbox = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.objectId, ada.id)))
      .orderBy(tables.outboxEvents.seq);
    expect(outbox.map((row) => row.type)).toEqual(['contact.updated', 'contact.updated', 'contact.deleted']);
  });

  it.each([
    ['no name, address or number', { notes: 'who?' }, 'given_name: a contact needs at least a name'],
    ['a bad address', { emails: [{ email: 'not-an-address' }] }, 'emails.0.email'],
    ['a bad birthday', { givenName: 'X', birthday: '10/12/1815' }, 'birthday'],
  ])('rejects %s (400)', async (_name, requestBody, words) => {
    const error = await sdkError(service.nylas.contacts.create({ identifier: grantId, requestBody: requestBody }));
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain(words);
  });

  it("lists the contact groups the grant's contacts name, each once, with stable ids, paged", async () => {
    const newGrant = async (local: string) =>
      (
        await service.nylas.auth.customAuthentication({
          requestBody: { provider: 'nylas', settings: { email: `${local}@${DOMAIN}` } },
        })
      ).data.id;
    const grouped = await newGrant('grouped');
    const elsewhere = await newGrant('elsewhere');
    expect((await service.nylas.contacts.groups({ identifier: grouped })).data).toEqual([]);

    const contact = (identifier: string, name: string, groups: string[]) =>
      service.nylas.contacts.create({
        identifier,
        requestBody: { givenName: name, groups: groups.map((id) => ({ id })) as never },
      });
    const grace = (await contact(grouped, 'Grace', ['work', 'friends'])).data;
    await contact(grouped, 'Alan', ['work']);
    await contact(grouped, 'Nobody', []);
    await contact(elsewhere, 'Hidden', ['secret']);

    const groups = await service.nylas.contacts.groups({ identifier: grouped });
    expect(groups.data).toEqual([
      { id: 'friends', grantId: grouped, object: 'contact_group', name: 'friends', groupType: 'user' },
      { id: 'work', grantId: grouped, object: 'contact_group', name: 'work', groupType: 'user' },
    ]);
    // A group's id finds its contacts.
    const atWork = await service.nylas.contacts.list({ identifier: grouped, queryParams: { group: 'work' } });
    expect(atWork.data.map((row) => row.givenName).sort()).toEqual(['Alan', 'Grace']);

    // Pages of one, on the wire.
    const first = await request(service.url, 'GET', `/v3/grants/${grouped}/contacts/groups?limit=1`, {
      key: service.apiKey,
    });
    expect(first.body.data.map((group: { id: string }) => group.id)).toEqual(['friends']);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await request(
      service.url,
      'GET',
      `/v3/grants/${grouped}/contacts/groups?limit=1&page_token=${encodeURIComponent(first.body.next_cursor)}`,
      { key: service.apiKey },
    );
    expect(second.body.data.map((group: { id: string }) => group.id)).toEqual(['work']);
    expect(second.body.next_cursor).toBeUndefined();

    // A group no contact names any more is gone; the others keep their ids.
    await service.nylas.contacts.update({
      identifier: grouped,
      contactId: grace.id,
      requestBody: { groups: [{ id: 'work' }] as never },
    });
    expect((await service.nylas.contacts.groups({ identifier: grouped })).data.map((group) => group.id)).toEqual([
      'work',
    ]);
    expect((await service.nylas.contacts.groups({ identifier: elsewhere })).data.map((group) => group.id)).toEqual([
      'secret',
    ]);
  });

  it('keeps contacts inside their application', async () => {
    const { apiKey } = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    expect(
      (await sdkError(service.client(apiKey).contacts.list({ identifier: grantId, queryParams: {} }))).statusCode,
    ).toBe(404);
  });
});
