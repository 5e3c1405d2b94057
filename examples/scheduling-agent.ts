/**
 * A scheduling agent: finds the first 30-minute slot two mailboxes share tomorrow (within 09:00–17:00 in
 * their time zone), creates the event with an invitation, and the invitee accepts.
 *
 *   npx tsx examples/scheduling-agent.ts
 */
import assert from 'node:assert/strict';
import { createAgentpostTools } from '../tools/ai-sdk.js';
import { unfence } from './support/fence.js';
import { createMailboxes, exampleService, waitFor } from './support/service.js';

const options = { toolCallId: 'example', messages: [] };
const service = await exampleService();
try {
  const [organizer, guest] = await createMailboxes(service, ['organizer', 'guest']);
  const organizerTools = createAgentpostTools({ url: service.apiUri, apiKey: service.apiKey, grantId: organizer! });
  const guestTools = createAgentpostTools({ url: service.apiUri, apiKey: service.apiKey, grantId: guest! });

  const tomorrow = Math.floor(Date.now() / 86_400_000) * 86_400 + 86_400;
  const openHours = [
    { days: [0, 1, 2, 3, 4, 5, 6], timezone: 'Europe/Paris', start: '09:00', end: '17:00', exdates: [] },
  ];
  const availability = unfence(
    await organizerTools.find_availability!.execute!(
      {
        participants: [{ email: organizer }, { email: guest }],
        start_time: tomorrow,
        end_time: tomorrow + 86_400,
        duration_minutes: 30,
        availability_rules: { default_open_hours: openHours },
      },
      options,
    ),
  ) as { time_slots: { start_time: number; end_time: number }[] };
  const slot = availability.time_slots[0];
  assert.ok(slot, 'a free slot tomorrow');

  const event = unfence(
    await organizerTools.create_event!.execute!(
      {
        calendar_id: 'primary',
        title: 'Planning',
        when: { start_time: slot.start_time, end_time: slot.end_time },
        participants: [{ email: guest }],
        notify_participants: true,
      },
      options,
    ),
  ) as { id: string };

  // The invitation travels as iMIP mail and lands on the guest's calendar; the guest accepts.
  const invited = await waitFor(async () => {
    const page = unfence(
      await guestTools.list_events!.execute!(
        { calendar_id: 'primary', start: slot.start_time - 60, end: slot.end_time + 60 },
        options,
      ),
    ) as { data: { id: string; title: string }[] };
    return page.data.find((item) => item.title === 'Planning');
  });
  await guestTools.send_rsvp!.execute!({ event_id: invited.id, calendar_id: 'primary', status: 'yes' }, options);

  const accepted = await waitFor(async () => {
    const current = unfence(
      await organizerTools.get_event!.execute!({ event_id: event.id, calendar_id: 'primary' }, options),
    ) as { participants: { email: string; status: string }[] };
    return current.participants.find((participant) => participant.email === guest && participant.status === 'yes');
  });
  console.log(
    `ok: "Planning" at ${new Date(slot.start_time * 1000).toISOString()}, ${accepted.email} said ${accepted.status}`,
  );
} finally {
  await service.close();
}
