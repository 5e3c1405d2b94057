/**
 * @module mail-extract/contracts
 * What a sign-up or sign-in mail carries for an agent (issue 40, item 3; docs/reading.md#waiting-for-a-message-codes-and-links-issue-40-item-3): its
 * one-time codes and its links, each with where it was found.
 */

/** Where a code or a link was found. */
export type ExtractedWhere = 'subject' | 'body';

/** A one-time code: a token of digits or letters and digits near a word like code, PIN or verification. */
export interface ExtractedCode {
  value: string;
  where: ExtractedWhere;
  /** The words around it (at most about 80 characters), whitespace collapsed. */
  context: string;
}

/** A link of the mail, verification and sign-in links first. */
export interface ExtractedLink {
  /** Where it leads (a tracking redirect resolved when the URL carries its target). */
  url: string;
  /** Its text as shown (empty for a bare URL in plain text). */
  text: string;
  where: ExtractedWhere;
}

/** The mail read for codes and links. */
export interface ExtractInput {
  subject: string;
  /** The body as stored: HTML or plain text. */
  body: string;
}

/** What {@link extractFromMail} finds. */
export interface Extracted {
  codes: ExtractedCode[];
  links: ExtractedLink[];
}
