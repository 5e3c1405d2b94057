/**
 * @module system/notifier
 * The default notifier, until the outbound mail path is wired: it logs what would have been sent.
 */
import type { Logger } from '../ports/logger.js';
import type { Notifier } from '../ports/notifier.js';

/** A {@link Notifier} that writes each email to the log instead of sending it. */
export function loggingNotifier(logger: Logger): Notifier {
  return {
    async send(email) {
      logger.warn('system email (no outbound mail configured)', {
        to: email.to,
        subject: email.subject,
        text: email.text,
      });
    },
  };
}
