/**
 * @module tools/compact-text
 * The text rendering of a result (./compact.ts): a short reading for the model, not a second copy of the JSON; the
 * structured content carries every field.
 */
import { fieldText } from '../src/operations/index.js';
import {
  agentOf,
  cut,
  type AgentBlock,
  type Json,
  type Participant,
  type ToolCall,
  type Truncation,
} from './compact-items.js';
import { trustLine } from './compact-trust.js';
import { documentLines } from './compact-document.js';
import { fenced, type Fence } from './fence.js';

/** People as a line: a list item's addresses as they are, a message's participants with their names. */
const who = (people: unknown) =>
  typeof people === 'string'
    ? people
    : ((people as Participant[] | undefined) ?? [])
        .map((person) => (person.name ? `${person.name} <${person.email}>` : person.email))
        .join(', ');
const when = (seconds: unknown) =>
  typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + 'Z' : '';
const kb = (bytes: unknown) => (typeof bytes === 'number' ? `${Math.max(1, Math.round(bytes / 1024))} KB` : '?');

/** A message in two or three lines; a field the item does not have (a `select`) is left out, not shown as "?". */
function messageLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : ''].filter(Boolean).join(', ');
  const files = ((item.attachments as Json[] | undefined) ?? [])
    .map((file) => `${fieldText(file.filename || 'unnamed')} (${kb(file.size)})`)
    .join(', ');
  const head = [
    String(item.id),
    when(item.date),
    [
      item.from !== undefined ? `from ${who(item.from) || '?'}` : '',
      item.to !== undefined ? `to ${who(item.to) || '?'}` : '',
    ]
      .filter(Boolean)
      .join(' '),
    flags,
  ];
  const second = [
    item.subject !== undefined ? JSON.stringify(item.subject) : '',
    item.thread_id ? `(thread ${fieldText(item.thread_id)})` : '',
    files ? `· attachments: ${files}` : '',
  ].filter(Boolean);
  const lines = [`- ${head.filter(Boolean).join(' · ')}`];
  if (second.length > 0) lines.push(`  ${second.join(' ')}`);
  const trust = trustLine(item.trust);
  if (trust) lines.push(trust);
  if (item.snippet) lines.push(`  ${fieldText(item.snippet)}`);
  return lines.join('\n');
}

function threadLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : '', item.has_attachments ? 'attachments' : '']
    .filter(Boolean)
    .join(', ');
  return [
    `- ${String(item.id)} · ${when(item.date)} · ${fieldText(item.message_count ?? '?')} message${item.message_count === 1 ? '' : 's'} · ${who(item.participants)}${flags ? ` · ${flags}` : ''}`,
    `  ${JSON.stringify(item.subject ?? '')}`,
    item.snippet ? `  ${fieldText(item.snippet)}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

const isParticipant = (value: unknown): value is Participant =>
  !!value &&
  typeof value === 'object' &&
  typeof (value as Participant).email === 'string' &&
  Object.keys(value).every((key) => key === 'name' || key === 'email');

/** A value in a line: scalars as they are, long ones cut, nested objects with their own scalar values. */
function valueText(value: unknown, depth = 0): string {
  if (typeof value === 'string') return cut(value, 120);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.every((entry) => typeof entry === 'string')) return cut(value.join(', '), 120);
    if (value.every(isParticipant)) return cut(who(value), 240);
    return depth === 0 && value.length <= 3
      ? `[${value.map((entry) => valueText(entry, depth + 1)).join('; ')}]`
      : `${value.length} item(s)`;
  }
  if (value && typeof value === 'object') {
    if (depth > 0) return `{${Object.keys(value).slice(0, 6).join(', ')}}`;
    const fields = Object.entries(value)
      .filter(([, field]) => field !== undefined && field !== null)
      .slice(0, 8)
      .map(([key, field]) => `${key}: ${valueText(field, depth + 1)}`);
    return cut(`{${fields.join(', ')}}`, 240);
  }
  return String(value);
}

/** One line of any other item: its fields with their values, long ones cut, nested values summarized. */
function genericLine(item: Json): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(item)) {
    if (key === 'grant_id' || key === 'object' || value === undefined || value === null) continue;
    if (key.endsWith('_truncated') || key === 'truncated') continue;
    if (
      (Array.isArray(value) && value.length === 0) ||
      (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
    )
      continue;
    parts.push(`${key}: ${valueText(value)}`);
  }
  return `- ${parts.join(' · ')}`;
}

/** How an item of each kind of compacted list (`agent.compact`) reads as text (./compact-items.ts: how it is compacted). */
const COMPACT_LINES: Record<NonNullable<AgentBlock['compact']>, (item: Json) => string> = {
  messages: messageLine,
  threads: threadLine,
};

/**
 * What a write did, naming the ids it made or changed: the first line of its text. A send (`agent.sends`) says what
 * was sent, scheduled or, for a dry run, would be; another write says what its operation's `agent.headline` says.
 */
function writeHeadline(agent: AgentBlock, output: Json, input: Json): string | undefined {
  const data = (
    output.data && typeof output.data === 'object' && !Array.isArray(output.data) ? output.data : output
  ) as Json;
  if (agent.sends === undefined) return agent.headline?.(data, input);
  const id = data.id === undefined ? '' : fieldText(data.id);
  const inThread = data.thread_id ? ` in thread ${fieldText(data.thread_id)}` : '';
  if (data.dry_run === true) {
    return data.blocked
      ? `Dry run: the send would be refused${data.reason ? ` (${fieldText(data.reason)})` : ''}; nothing was sent`
      : 'Dry run: the send would go; nothing was sent';
  }
  if (output.approval_id !== undefined && output.status === 'pending') {
    // Held by the server's oversight (docs/oversight.md): the model must not send it again.
    return `Not sent: queued for a person's approval (approval ${fieldText(output.approval_id)}). ${fieldText(output.message ?? '')}`.trim();
  }
  const scheduleId = output.schedule_id ?? data.schedule_id;
  const draft = agent.sends === 'draft' ? `draft ${String(input.draft_id)} as ` : '';
  if (scheduleId !== undefined) {
    return `Scheduled ${draft}message ${id}${inThread} to be sent at ${when(output.send_at ?? data.send_at)} (schedule ${fieldText(scheduleId)}; stop_scheduled_message stops it)`;
  }
  return `Sent ${draft}message ${id}${inThread}`;
}

/** The continuation of a cut page: which call returns the items that did not fit. */
function cutLines(output: Json): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(output)) {
    if (key !== 'truncated' && !key.endsWith('_truncated')) continue;
    const note = value as Truncation | undefined;
    if (note?.hint) lines.push(`[cut: ${note.hint}]`);
  }
  return lines;
}

/**
 * The text content of a result: a short reading for the model; the structured content carries every field. `input`
 * is what the agent asked (a delete answers nothing: its line names the id it was given).
 */
export function renderForAgent(tool: string, output: Json, input: Json = {}, fence?: Fence): string {
  const agent = agentOf(tool);
  if (agent.document) return documentLines(tool, output, input).join('\n');
  const lines: string[] = [];
  /** Lines of text from outside as one block, fenced as data when the result has a fence. */
  const asData = (block: string[]) => (fence ? fenced(block.join('\n'), fence) : block.join('\n'));
  /** What the reader removed, said in the tool's own words, outside the fence. */
  const hiddenNote = (message: Json) =>
    typeof message.hidden_text_removed === 'number' && message.hidden_text_removed > 0
      ? [`[hidden_text_removed: ${message.hidden_text_removed} chars]`]
      : [];
  if (Array.isArray(output.data)) {
    const items = output.data as Json[];
    // Selected items (`select`) are read field by field: only what was selected, nothing shown as missing.
    const selected = typeof input.select === 'string' && input.select.trim() !== '';
    const line = !selected && agent.compact ? COMPACT_LINES[agent.compact] : genericLine;
    lines.push(
      `${items.length} item(s)${output.next_cursor ? `; more with page_token: "${fieldText(output.next_cursor)}"` : '; no more pages'}`,
    );
    if (items.length > 0) lines.push(asData(items.map(line)));
  } else if (agent.body === 'thread' && Array.isArray(output.messages)) {
    const {
      messages,
      messages_truncated: truncated,
      latest_draft_or_message: _latest,
      message_ids: ids,
      ...thread
    } = output;
    lines.push(genericLine({ ...thread, ...(Array.isArray(ids) ? { messages: ids.length } : {}) }).slice(2));
    const left = (truncated as { messages?: Json[]; call?: ToolCall } | undefined)?.messages ?? [];
    if (left.length > 0) {
      lines.push('', `Earlier messages not shown, newest first (read each with get_message):`);
      lines.push(
        asData(
          left.map(
            (note) =>
              `- ${String(note.id)} · ${when(note.date)} · from ${fieldText(note.from ?? '?')}${note.snippet ? ` · ${fieldText(note.snippet)}` : ''}`,
          ),
        ),
      );
    }
    for (const message of messages as Json[]) {
      const { body_text: bodyText, body_truncated: bodyCut, snippet: _snippet, ...rest } = message;
      lines.push('', asData([messageLine(rest), typeof bodyText === 'string' ? bodyText : '']), ...hiddenNote(rest));
      if ((bodyCut as Truncation | undefined)?.hint) lines.push(`[cut: ${(bodyCut as Truncation).hint}]`);
    }
    if ((truncated as Truncation | undefined)?.hint) lines.push('', `[cut: ${(truncated as Truncation).hint}]`);
    for (const line of cutLines(thread)) lines.push(line);
    return lines.join('\n');
  } else if (typeof output.body_text === 'string') {
    const { body_text: bodyText, body: html, ...rest } = output;
    lines.push(asData([messageLine(rest), '', bodyText]), ...hiddenNote(rest));
    if (typeof html === 'string') lines.push('', '--- HTML ---', asData([html]));
  } else {
    const headline = writeHeadline(agent, output, input);
    if (headline) lines.push(headline);
    const data = (
      output.data && typeof output.data === 'object' && !Array.isArray(output.data) ? output.data : undefined
    ) as Json | undefined;
    const { data: _data, ...others } = output;
    if (data) {
      const isMessage = 'from' in data || 'to' in data || 'subject' in data;
      lines.push(asData([isMessage ? messageLine(data) : genericLine(data)]));
      const more = genericLine(others).slice(2);
      if (more) lines.push(asData([more]));
    } else {
      const line = genericLine(output).slice(2);
      if (line || !headline) lines.push(line ? asData([line]) : line);
    }
  }
  lines.push(...cutLines(output));
  return lines.join('\n');
}
