/**
 * An independent checker of RFC 5545 / RFC 5546 structure for the iCalendar text we emit (written without
 * ical.js, so the codec is not checked by itself). Returns the problems found; empty means valid.
 */

interface Node {
  name: string;
  properties: { name: string; params: Record<string, string>; value: string }[];
  children: Node[];
}

function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  const pattern = /;([A-Za-z0-9-]+)=("[^"]*"|[^;:]*)/g;
  for (const match of text.matchAll(pattern)) params[match[1]!.toUpperCase()] = match[2]!.replace(/^"|"$/g, '');
  return params;
}

/** Splits a content line into name, parameters and value (the first ':' outside quotes ends the parameters). */
function splitLine(line: string): { name: string; params: Record<string, string>; value: string } {
  let inQuotes = false;
  for (let index = 0; index < line.length; index++) {
    const character = line[index];
    if (character === '"') inQuotes = !inQuotes;
    else if (character === ':' && !inQuotes) {
      const head = line.slice(0, index);
      const name = head.split(';')[0]!.toUpperCase();
      return { name, params: parseParams(head.slice(name.length)), value: line.slice(index + 1) };
    }
  }
  return { name: '', params: {}, value: '' };
}

export function validateICalendar(text: string, method?: 'REQUEST' | 'CANCEL' | 'REPLY' | 'PUBLISH'): string[] {
  const problems: string[] = [];
  if (!text.endsWith('\r\n')) problems.push('does not end with CRLF');
  const physical = text.split('\r\n').slice(0, -1);
  physical.forEach((line, index) => {
    if (Buffer.byteLength(line, 'utf8') > 75) problems.push(`line ${index + 1} is longer than 75 octets`);
    if (line.includes('\n') || line.includes('\r')) problems.push(`line ${index + 1} has a bare line break`);
  });
  const lines: string[] = [];
  for (const line of physical) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length > 0) lines[lines.length - 1] += line.slice(1);
    else lines.push(line);
  }
  const root: Node = { name: 'ROOT', properties: [], children: [] };
  const stack: Node[] = [root];
  for (const line of lines) {
    const { name, params, value } = splitLine(line);
    if (!name) {
      problems.push(`not a content line: ${line.slice(0, 40)}`);
      continue;
    }
    if (name === 'BEGIN') {
      const node: Node = { name: value.toUpperCase(), properties: [], children: [] };
      stack[stack.length - 1]!.children.push(node);
      stack.push(node);
    } else if (name === 'END') {
      const node = stack.pop();
      if (!node || node.name !== value.toUpperCase()) problems.push(`END:${value} does not close ${node?.name}`);
    } else {
      stack[stack.length - 1]!.properties.push({ name, params, value });
    }
  }
  if (stack.length !== 1) problems.push('unbalanced BEGIN/END');
  const calendar = root.children[0];
  if (!calendar || calendar.name !== 'VCALENDAR' || root.children.length !== 1)
    return [...problems, 'not exactly one VCALENDAR'];
  const count = (node: Node, name: string) => node.properties.filter((property) => property.name === name).length;
  const one = (node: Node, name: string, where: string) => {
    if (count(node, name) !== 1) problems.push(`${where} needs exactly one ${name} (has ${count(node, name)})`);
  };
  one(calendar, 'PRODID', 'VCALENDAR');
  one(calendar, 'VERSION', 'VCALENDAR');
  if (calendar.properties.find((property) => property.name === 'VERSION')?.value !== '2.0')
    problems.push('VERSION is not 2.0');
  if (method) {
    const value = calendar.properties.find((property) => property.name === 'METHOD')?.value;
    if (value !== method) problems.push(`METHOD is ${value}, expected ${method}`);
  }
  const zones = new Set<string>();
  for (const timezone of calendar.children.filter((child) => child.name === 'VTIMEZONE')) {
    one(timezone, 'TZID', 'VTIMEZONE');
    zones.add(timezone.properties.find((property) => property.name === 'TZID')?.value ?? '');
    const observances = timezone.children.filter((child) => child.name === 'STANDARD' || child.name === 'DAYLIGHT');
    if (observances.length === 0) problems.push('VTIMEZONE without STANDARD or DAYLIGHT');
    for (const observance of observances)
      for (const name of ['DTSTART', 'TZOFFSETFROM', 'TZOFFSETTO']) one(observance, name, observance.name);
  }
  const events = calendar.children.filter((child) => child.name === 'VEVENT');
  if (events.length === 0) problems.push('no VEVENT');
  for (const event of events) {
    one(event, 'UID', 'VEVENT');
    one(event, 'DTSTAMP', 'VEVENT');
    if (!/^\d{8}T\d{6}Z$/.test(event.properties.find((property) => property.name === 'DTSTAMP')?.value ?? ''))
      problems.push('DTSTAMP is not a UTC date-time');
    if (method !== 'REPLY' && method !== 'CANCEL') one(event, 'DTSTART', 'VEVENT');
    if (count(event, 'DTEND') > 0 && count(event, 'DURATION') > 0) problems.push('VEVENT has both DTEND and DURATION');
    for (const property of event.properties) {
      const tzid = property.params.TZID;
      if (tzid && !zones.has(tzid)) problems.push(`${property.name} uses TZID ${tzid} without a VTIMEZONE`);
      if (property.name === 'RRULE' && /UNTIL=\d{8}T\d{6}(?!Z)/.test(property.value))
        problems.push('RRULE UNTIL of a timed event is not UTC');
    }
    const start = event.properties.find((property) => property.name === 'DTSTART');
    const end = event.properties.find((property) => property.name === 'DTEND');
    if (start && end && (start.params.VALUE === 'DATE') !== (end.params.VALUE === 'DATE'))
      problems.push('DTSTART and DTEND have different value types');
    if (method === 'REQUEST' || method === 'CANCEL' || method === 'REPLY') one(event, 'ORGANIZER', 'VEVENT');
    if (method === 'REPLY' && count(event, 'ATTENDEE') !== 1) problems.push('a REPLY needs exactly one ATTENDEE');
    if (method === 'REQUEST' && count(event, 'ATTENDEE') === 0) problems.push('a REQUEST needs ATTENDEEs');
    if (method === 'CANCEL' && event.properties.find((property) => property.name === 'STATUS')?.value !== 'CANCELLED')
      problems.push('a CANCEL needs STATUS:CANCELLED');
    for (const attendee of event.properties.filter(
      (property) => property.name === 'ATTENDEE' || property.name === 'ORGANIZER',
    )) {
      if (!/^mailto:/i.test(attendee.value)) problems.push(`${attendee.name} is not a mailto: address`);
    }
  }
  return problems;
}
