import type { ValueSample } from "../keeper/state/value-series.js";
import { type Html, html } from "../ops/html.js";
import type { DayActivity } from "./fleet-totals.js";
import { centsText } from "./money-text.js";

/**
 * The page's charts, drawn on the server as inline SVG: no script, no library, nothing fetched; the
 * Content-Security-Policy stays `'self'`. Presentation attributes only (no style attribute, which
 * the policy would block). Each mark has a <title>, which browsers show on hover.
 */

const WIDTH = 640;
const HEIGHT = 180;
const PAD = { left: 64, right: 12, top: 12, bottom: 28 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(5, 10);
const time = (seconds: number) => new Date(seconds * 1000).toISOString().slice(5, 16).replace("T", " ");
const round1 = (n: number) => Math.round(n * 10) / 10;

/** A dollar axis's top: the largest figure, at least a dollar, rounded up to 1, 2 or 5 times a power of ten. */
export function niceCeiling(maxMicroUsd: bigint): bigint {
  for (let step = 1_000_000n; ; step *= 10n)
    for (const m of [1n, 2n, 5n]) if (step * m >= maxMicroUsd) return step * m;
}

/** The largest of some amounts, 0 for none (Math.max takes no bigint). */
function maxOf(amounts: readonly bigint[]): bigint {
  let max = 0n;
  for (const amount of amounts) if (amount > max) max = amount;
  return max;
}

function frame(
  id: string,
  label: string,
  body: Html | readonly Html[],
  axisTop: bigint,
  axisBottom = 0n,
): Html {
  return html`<svg id="${id}" class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${label}" preserveAspectRatio="xMidYMid meet">
<title>${label}</title>
<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + PLOT_H}" stroke="#8c959f"/>
<line x1="${PAD.left}" y1="${PAD.top + PLOT_H}" x2="${WIDTH - PAD.right}" y2="${PAD.top + PLOT_H}" stroke="#8c959f"/>
<text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" font-size="11" fill="#57606a">${centsText(axisTop)}</text>
<text x="${PAD.left - 6}" y="${PAD.top + PLOT_H}" text-anchor="end" font-size="11" fill="#57606a">${centsText(axisBottom)}</text>
${body}
</svg>`;
}

/** Claims and exits a day: two bars a day (what each brought in), the day under every other pair. */
export function activityChart(days: readonly DayActivity[]): Html {
  const top = niceCeiling(maxOf(days.flatMap((d) => [d.claimedMicroUsd, d.exitedMicroUsd])));
  const slot = PLOT_W / Math.max(1, days.length);
  const barW = round1(Math.max(2, slot / 2 - 2));
  const bar = (x: number, micro: bigint, colour: string, title: string) => {
    const h = round1((Number(micro) / Number(top)) * PLOT_H);
    return html`<rect class="bar" x="${round1(x)}" y="${round1(PAD.top + PLOT_H - h)}" width="${barW}" height="${h}" fill="${colour}"><title>${title}</title></rect>`;
  };
  const body = days.map((d, i) => {
    const x = PAD.left + i * slot + 1;
    return html`${bar(x, d.claimedMicroUsd, "#1a7f37", `${day(d.day)}: ${d.claims} claim(s), ${centsText(d.claimedMicroUsd)}`)}${bar(
      x + barW + 1,
      d.exitedMicroUsd,
      "#0969da",
      `${day(d.day)}: ${d.exits} exit(s), ${centsText(d.exitedMicroUsd)}`,
    )}${
      i % 2 === days.length % 2
        ? ""
        : html`<text x="${round1(x + barW)}" y="${HEIGHT - 8}" text-anchor="middle" font-size="10" fill="#57606a">${day(d.day)}</text>`
    }`;
  });
  return frame("chart-activity", "Claims (green) and exits (blue) a day, in dollars brought in", body, top);
}

/** The fleet's value over time: a line through the samples, a dot on each, first and last time under it. */
export function valueChart(samples: readonly ValueSample[]): Html {
  const top = niceCeiling(maxOf(samples.map((s) => s.valueMicroUsd)));
  const first = samples[0]?.at ?? 0;
  const span = Math.max(1, (samples.at(-1)?.at ?? first) - first);
  const points = samples.map((s) => ({
    x: round1(PAD.left + (samples.length === 1 ? PLOT_W / 2 : ((s.at - first) / span) * PLOT_W)),
    y: round1(PAD.top + PLOT_H - (Number(s.valueMicroUsd) / Number(top)) * PLOT_H),
    s,
  }));
  const body = html`<polyline class="value-line" fill="none" stroke="#0969da" stroke-width="2" points="${points
    .map((p) => `${p.x},${p.y}`)
    .join(" ")}"/>
${points.map(
  (p) =>
    html`<circle class="point" cx="${p.x}" cy="${p.y}" r="2.5" fill="#0969da"><title>${time(p.s.at)} UTC: ${centsText(p.s.valueMicroUsd)}</title></circle>`,
)}
${
  samples.length > 0
    ? html`<text x="${PAD.left}" y="${HEIGHT - 8}" font-size="10" fill="#57606a">${time(first)}</text><text x="${WIDTH - PAD.right}" y="${HEIGHT - 8}" text-anchor="end" font-size="10" fill="#57606a">${time(first + span)}</text>`
    : ""
}`;
  return frame("chart-value", "Fleet value at the mark over time", body, top);
}
