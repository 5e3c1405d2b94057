/**
 * @module mail/contracts
 * The types the inbound mail path shares with the areas that follow a delivery (deliverability's replies and
 * mailbox reports).
 */

/** One stored copy of a message: its mailbox and its id there. */
export interface StoredCopy {
  grantId: string;
  messageId: string;
}
