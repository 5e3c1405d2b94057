import { describe, expect, it } from 'vitest';
import { GIVE_UP_WINDOW_MS } from '../../../src/webhooks/delivery-attempt.js';
import {
  buildNotificationBody,
  MAX_NOTIFICATION_BYTES,
  nextAttemptAt,
  notificationSource,
} from '../../../src/webhooks/delivery.js';

const notification = {
  id: 'evt_1',
  type: 'message.created',
  application_id: 'app_1',
  grant_id: 'grant_1',
  time: 1_774_830_600,
  object: { id: 'msg_1', object: 'message', subject: 'Hi', body: '<p>Hello</p>' },
};

describe('notification envelope', () => {
  it('is the Nylas envelope with the attempt number, serialised once', () => {
    const { envelope, json } = buildNotificationBody(notification, 3);
    expect(envelope).toEqual({
      specversion: '1.0',
      type: 'message.created',
      source: '/nylas/emails/realtime',
      id: 'evt_1',
      time: 1_774_830_600,
      webhook_delivery_attempt: 3,
      data: { application_id: 'app_1', grant_id: 'grant_1', object: notification.object },
    });
    expect(JSON.parse(json)).toEqual(envelope);
  });

  it('drops the body of an object over 1 MB and marks the type .truncated', () => {
    const big = { ...notification, object: { ...notification.object, body: 'x'.repeat(MAX_NOTIFICATION_BYTES) } };
    const { envelope, json } = buildNotificationBody(big, 1);
    expect(envelope.type).toBe('message.created.truncated');
    expect(envelope.data.object).toEqual({ id: 'msg_1', object: 'message', subject: 'Hi' });
    expect(Buffer.byteLength(json)).toBeLessThan(1024);
  });

  it.each([
    ['grant.created', '/nylas/system'],
    ['message.created', '/nylas/emails/realtime'],
    ['thread.replied', '/com/nylas/tracking'],
    ['message.opened', '/com/nylas/tracking'],
    ['message.send_success', '/nylas/send'],
    ['message.bounce_detected', '/nylas/send'],
    ['event.updated', '/nylas/events/realtime'],
    ['calendar.created', '/nylas/calendars/realtime'],
    ['folder.deleted', '/nylas/folders/realtime'],
  ])('%s has source %s', (type, source) => {
    expect(notificationSource(type)).toBe(source);
  });
});

describe('retry schedule', () => {
  it('backs off exponentially, lands the last attempt at the end of the window, then gives up', () => {
    const queued = 0;
    expect(nextAttemptAt(queued, 1, 0)).toBe(5_000);
    expect(nextAttemptAt(queued, 2, 5_000)).toBe(5_000 + 300_000);
    expect(nextAttemptAt(queued, 3, 0)).toBe(1_800_000);
    expect(nextAttemptAt(queued, 4, 0)).toBe(7_200_000);
    expect(nextAttemptAt(queued, 9, 0)).toBe(36_000_000);
    expect(nextAttemptAt(queued, 12, GIVE_UP_WINDOW_MS - 1_000)).toBe(GIVE_UP_WINDOW_MS);
    expect(nextAttemptAt(queued, 13, GIVE_UP_WINDOW_MS)).toBeUndefined();
  });
});
