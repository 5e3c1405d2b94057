/**
 * @module ports/notifier
 * The service's own operational emails (the default that only logs: src/system/notifier.ts).
 */

/** An operational email the service itself sends (webhook failure alerts), plain text. */
export interface SystemEmail {
  to: string[];
  subject: string;
  text: string;
}

/**
 * Sends the service's own operational emails. The outbound mail path implements it; until it is wired, the
 * default (`loggingNotifier`, src/system/notifier.ts) only logs what would have been sent. Tests record what was sent.
 */
export interface Notifier {
  send(email: SystemEmail): Promise<void>;
}
