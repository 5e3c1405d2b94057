/**
 * @module oversight/loop
 * Loop detection (issue 37, item 4), pure: a grant's mailbox and another trading more than `limit` messages in one
 * thread within a window, counting every message of the thread whatever sent it. Each message of the grant's thread
 * is between the grant and someone: a message from the grant is traded with each of its recipients, a message to it
 * with its sender. A loop needs both directions; when several mailboxes loop, the busiest is named.
 *
 * Linear in the messages given (oldest first), which the store bounds.
 */

/** A message of the thread: when (unix seconds), from whom, to whom (lower-cased addresses). */
export interface TrafficMessage {
  date: number;
  from: readonly string[];
  to: readonly string[];
}

/** A loop: with whom, how many messages in the window, when the episode began and when it will have ended. */
export interface Loop {
  counterpart: string;
  messages: number;
  /** Unix seconds the current episode began: the message that took the pair over the limit (see {@link episodeStart}). */
  since: number;
  /** Unix seconds from which the window holds no more than `limit` of the pair's messages (if no more are traded). */
  until: number;
}

/** What a loop is: more than `limit` messages within `windowSeconds`. */
export interface LoopBound {
  limit: number;
  windowSeconds: number;
}

/**
 * The loop a thread is in at `now`, if any. `traffic` holds the thread's messages from at least `windowSeconds`
 * before `now` (more, back to where an episode may have begun, gives the episode's true start), oldest first.
 */
export function findLoop(
  traffic: readonly TrafficMessage[],
  self: string,
  bound: LoopBound,
  now: number,
): Loop | undefined {
  const me = self.toLowerCase();
  /** Per counterpart: the dates of the messages traded (oldest first) and which directions occurred in the window. */
  const pairs = new Map<string, { dates: number[]; sent: boolean; received: boolean }>();
  const windowStart = now - bound.windowSeconds;
  for (const message of traffic) {
    if (message.date > now) continue;
    const outgoing = message.from.includes(me);
    const others = outgoing ? message.to : message.from;
    for (const other of new Set(others)) {
      if (other === me) continue;
      let pair = pairs.get(other);
      if (!pair) pairs.set(other, (pair = { dates: [], sent: false, received: false }));
      pair.dates.push(message.date);
      if (message.date > windowStart) {
        if (outgoing) pair.sent = true;
        else pair.received = true;
      }
    }
  }
  let found: Loop | undefined;
  for (const [counterpart, pair] of pairs) {
    if (!pair.sent || !pair.received) continue;
    const inWindow = pair.dates.filter((date) => date > windowStart);
    if (inWindow.length <= bound.limit) continue;
    if (found && found.messages >= inWindow.length) continue;
    // Sends may resume once all but `limit` of these left the window: the oldest ones, one window after each.
    const until = inWindow[inWindow.length - bound.limit - 1]! + bound.windowSeconds;
    found = {
      counterpart,
      messages: inWindow.length,
      since: episodeStart(pair.dates, bound, now) ?? inWindow[bound.limit]!,
      until,
    };
  }
  return found;
}

/**
 * When the episode a pair is in at `now` began: the date of the message that took the count within the window over
 * the limit, after which it never fell back to the limit. A message counts in the window (t - window, t]; one that
 * leaves at the instant another enters leaves first. Undefined when the pair is not over the limit at `now`.
 */
export function episodeStart(dates: readonly number[], bound: LoopBound, now: number): number | undefined {
  let count = 0;
  let start: number | undefined;
  let entered = 0;
  let left = 0;
  // Between two instants where a message enters or leaves the window the count stands still; at each, every message
  // entering and leaving is counted before the count is read (one leaving as another enters is no gap).
  for (;;) {
    const enter = entered < dates.length && dates[entered]! <= now ? dates[entered]! : Infinity;
    const leave = left < entered ? dates[left]! + bound.windowSeconds : Infinity;
    const at = Math.min(enter, leave);
    if (at > now) break;
    while (left < entered && dates[left]! + bound.windowSeconds <= at) {
      count--;
      left++;
    }
    while (entered < dates.length && dates[entered] === at) {
      count++;
      entered++;
    }
    if (count > bound.limit) start ??= at;
    else start = undefined;
  }
  return count > bound.limit ? start : undefined;
}
