/**
 * @module mail/stages/inbox-processing
 * Stage 5 of inbound mail: the inbound rules of the recipient's workspace on the message (`from.*` = the From
 * header's address, else MAIL FROM; `recipient.*` = that recipient), together with the spam verdict, decide where the
 * copy goes and how it looks. Pure.
 *
 * Where it goes, first that applies: `trash` → trash; spam (the spam stage's verdict or `mark_as_spam`) → junk;
 * `assign_to_folder` → those folders (by name); `archive` → archive; else the inbox. `mark_as_read` stores it read,
 * `mark_as_starred` starred. `block` drops the copy: nothing is stored for that mailbox and no `message.created`
 * is emitted (the sender was already told 250).
 */
import { type GrantEnforcement, evaluateRules, evaluationInputOf } from '../../admin/index.js';
import type { SpamVerdict } from '../../ports/index.js';
import type { FolderChoice, InboxProcessingDecision } from '../contracts.js';
import { anythingApplies } from './smtp-rcpt.js';

/** What the stage looks at. */
export interface InboxProcessingInput {
  enforcement: GrantEnforcement;
  /** The From header's address, else MAIL FROM. */
  from: string;
  recipient: string;
  spam?: SpamVerdict | undefined;
  /** The injection score and DMARC verdict, when a rule reads them (./trust-stage.ts). */
  trust?: { injection: number; dmarc: string } | undefined;
  /** The kind of machine that wrote it (./automated.ts), when one did: `message.automated` conditions read it. */
  automated?: string | undefined;
}

export type { FolderChoice, InboxProcessingDecision } from '../contracts.js';

/** Decides one copy of a message. */
export function decideInboxProcessing({
  enforcement,
  from,
  recipient,
  spam,
  trust,
  automated,
}: InboxProcessingInput): InboxProcessingDecision {
  const input = evaluationInputOf({ from, recipients: [recipient] });
  if (automated) input.automated = automated;
  if (trust) {
    input.trust_injection = trust.injection;
    input.trust_dmarc = trust.dmarc;
  }
  const spamFolder = spam?.spam === true;
  if (!anythingApplies(enforcement) && !spamFolder) {
    return {
      evaluated: false,
      input,
      outcome: evaluateRules([], input, enforcement.lists),
      drop: false,
      folders: [{ system: 'inbox' }],
      unread: true,
      starred: false,
    };
  }
  const outcome = evaluateRules(enforcement.inbound, input, enforcement.lists);
  let folders: FolderChoice[];
  if (outcome.trash) folders = [{ system: 'trash' }];
  else if (spamFolder || outcome.markAsSpam) folders = [{ system: 'junk' }];
  else if (outcome.folders.length > 0) folders = outcome.folders.map((name) => ({ name }));
  else if (outcome.archive) folders = [{ system: 'archive' }];
  else folders = [{ system: 'inbox' }];
  return {
    evaluated: anythingApplies(enforcement),
    input,
    outcome,
    drop: outcome.block,
    folders,
    unread: !outcome.markAsRead,
    starred: outcome.markAsStarred,
  };
}
