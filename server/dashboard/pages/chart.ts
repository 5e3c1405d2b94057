/**
 * @module server/dashboard/pages/chart
 * A domain's sending over time as inline SVG, drawn on the server (no library, no script): recipients sent per day
 * as bars on the left scale, the hard-bounce and complaint rates as lines on the right scale (percent). Presentation
 * attributes only (no `style`), so a strict Content-Security-Policy leaves it alone; the numbers are also in a table.
 */
import { html } from 'hono/html';
import type { DomainSendingDay } from '../../../src/schemas/domains.js';
import type { Fragment } from './kit.js';

const WIDTH = 640;
const HEIGHT = 200;
const PAD = { left: 44, right: 44, top: 12, bottom: 28 };

/** A round, readable top of a scale at or above `value` (1, 2 or 5 times a power of ten). */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

/** `points` of a polyline through `values` on a scale whose top is `top`. */
function line(values: readonly number[], top: number, x: (index: number) => number, y: (fraction: number) => number) {
  return values.map((value, index) => `${x(index).toFixed(1)},${y(value / top).toFixed(1)}`).join(' ');
}

/** The chart of one domain's days (oldest first), titled `label`. */
export function sendingChart(label: string, days: readonly DomainSendingDay[], id: string): Fragment {
  if (days.length === 0) return html``;
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const sentTop = niceCeiling(Math.max(...days.map((day) => day.sent)));
  const rateTop = niceCeiling(Math.max(0.01, ...days.flatMap((day) => [day.bounce_rate, day.complaint_rate])) * 100);
  const slot = plotWidth / days.length;
  const x = (index: number) => PAD.left + slot * index + slot / 2;
  const y = (fraction: number) => PAD.top + plotHeight * (1 - Math.min(1, Math.max(0, fraction)));
  const bars = days.map((day, index) => {
    const top = y(day.sent / sentTop);
    return html`<rect
      x="${(PAD.left + slot * index + slot * 0.15).toFixed(1)}"
      y="${top.toFixed(1)}"
      width="${(slot * 0.7).toFixed(1)}"
      height="${(PAD.top + plotHeight - top).toFixed(1)}"
      fill="#9ab"
      ><title>${day.day}: ${day.sent} sent</title></rect
    >`;
  });
  const bounce = line(
    days.map((day) => day.bounce_rate * 100),
    rateTop,
    x,
    y,
  );
  const complaint = line(
    days.map((day) => day.complaint_rate * 100),
    rateTop,
    x,
    y,
  );
  const first = days[0]!.day;
  const last = days[days.length - 1]!.day;
  return html`<figure class="chart">
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      width="100%"
      role="img"
      aria-labelledby="${id}-title"
    >
      <title id="${id}-title">
        ${label}: recipients sent per day (bars, left scale up to ${sentTop}), hard-bounce rate (solid line) and
        complaint rate (dashed line), right scale up to ${rateTop}%, from ${first} to ${last}
      </title>
      <line
        x1="${PAD.left}"
        y1="${PAD.top + plotHeight}"
        x2="${WIDTH - PAD.right}"
        y2="${PAD.top + plotHeight}"
        stroke="#555"
      />
      <line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotHeight}" stroke="#555" />
      <line
        x1="${WIDTH - PAD.right}"
        y1="${PAD.top}"
        x2="${WIDTH - PAD.right}"
        y2="${PAD.top + plotHeight}"
        stroke="#555"
      />
      <text x="${PAD.left - 4}" y="${PAD.top + 10}" text-anchor="end" font-size="11">${sentTop}</text>
      <text x="${PAD.left - 4}" y="${PAD.top + plotHeight}" text-anchor="end" font-size="11">0</text>
      <text x="${WIDTH - PAD.right + 4}" y="${PAD.top + 10}" font-size="11">${rateTop}%</text>
      <text x="${WIDTH - PAD.right + 4}" y="${PAD.top + plotHeight}" font-size="11">0%</text>
      <text x="${PAD.left}" y="${HEIGHT - 8}" font-size="11">${first}</text>
      <text x="${WIDTH - PAD.right}" y="${HEIGHT - 8}" text-anchor="end" font-size="11">${last}</text>
      ${bars}
      <polyline points="${bounce}" fill="none" stroke="#b00" stroke-width="2" />
      <polyline points="${complaint}" fill="none" stroke="#a60" stroke-width="2" stroke-dasharray="5 3" />
    </svg>
    <figcaption>${label}: sent (bars), hard-bounce rate (solid), complaint rate (dashed).</figcaption>
  </figure>`;
}
