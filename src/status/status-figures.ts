import type { NextStep, StatusCell } from "../core/strategy-hooks.js";
import { type Html, html } from "../ops/html.js";
import type { Totals } from "./fleet-totals.js";
import { money, priceText, signedMoney } from "./money-text.js";
import type { PositionLine } from "./position-lines.js";

/** The page's figures as HTML: totals, the positions table, the next steps. The data is computed elsewhere. */

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

function figure(key: string, label: string, value: Html | string, note: Html | string = ""): Html {
  return html`<div class="figure" data-figure="${key}"><span class="label">${label}</span><b class="value">${value}</b>${
    note === "" ? "" : html`<span class="note">${note}</span>`
  }</div>`;
}

/** The totals, first on the page (the fleet's) and first in each wallet. */
export function totalsBlock(t: Totals, id?: string): Html {
  return html`<div class="totals"${id === undefined ? "" : html` id="${id}"`}>
${figure("value", "value now (mark)", money(t.valueMicroUsd), `${t.positions} position(s)`)}
${figure(
  "realizable",
  "realizable now",
  money(t.realizableMicroUsd),
  t.noBid > 0 ? `at the bid less fees; ${t.noBid} without a bid` : "at the bid less fees",
)}
${figure("claimed", "claimed today", money(t.claimedTodayMicroUsd), html`7 days: ${money(t.claimed7dMicroUsd)}`)}
${figure("exits", "realized pnl of exits, 7 days", signedMoney(t.exitsPnl7dMicroUsd), `${t.exits7d} exit(s)`)}
${figure(
  "fees",
  "fees paid",
  money(t.feesPaidMicroUsd + t.exitFees7dMicroUsd),
  html`positions held ${money(t.feesPaidMicroUsd)}, exits (7 days) ${money(t.exitFees7dMicroUsd)}`,
)}
${figure("awaiting", "waits for a claim", money(t.awaitingClaimMicroUsd), `${t.awaitingClaim} winner(s)`)}
</div>`;
}

function pnlPct(pct: number | null): string {
  return pct === null ? "" : `${pct > 0 ? "+" : ""}${pct.toFixed(2)} %`;
}

/** A strategy's own column (its `statusView` positionColumns). */
export interface ExtraColumn {
  key: string;
  label: string;
  cells: Readonly<Record<string, StatusCell>>;
}

/**
 * One row a position; on a phone each row is a card (status.css), every cell labelled by its
 * `data-label`, so realizable pnl stays in view without scrolling sideways.
 */
export function positionsTable(
  lines: readonly PositionLine[],
  columns: readonly ExtraColumn[],
  cellText: (cell: StatusCell | undefined) => string,
): Html {
  return html`<table class="positions cards"><thead><tr><th>market</th><th>side</th><th>contracts</th><th title="average price paid a contract">entry</th><th title="the service's mark price">mark</th><th title="the best bid: what a sale gets a contract (sellPriceUsd)">bid</th><th title="contracts at the mark; a winner at its payout">value</th><th title="what selling now brings in, less the sell fee a strategy estimates; a winner's payout">realizable</th><th title="realizable less what the position cost (fees included)">realizable pnl</th><th>rule nearest to firing</th><th>state</th>${columns.map(
    (c) => html`<th>${c.label}</th>`,
  )}</tr></thead><tbody>
${lines.map(
  (
    l,
  ) => html`<tr data-position="${l.pubkey}" data-market="${l.marketId}"${l.isAlert ? html` class="warn"` : ""}>
<td data-label="market" class="market">${l.title} <span class="mono id">${l.marketId}</span></td>
<td data-label="side">${l.side}</td>
<td data-label="contracts" class="num">${l.contracts}</td>
<td data-label="entry" class="num">${priceText(l.entryMicroUsd)}</td>
<td data-label="mark" class="num">${priceText(l.markMicroUsd, "–")}</td>
<td data-label="bid" class="num">${priceText(l.bidMicroUsd, l.state === "open" ? "no bid" : "–")}</td>
<td data-label="value" class="num">${money(l.valueMicroUsd, "–")}</td>
<td data-label="realizable" class="num realizable"${l.isNetOfFees ? "" : html` title="at the bid before fees: no strategy estimates this position's sell fee"`}>${money(
    l.realizableMicroUsd,
    l.state === "open" ? "no bid" : "awaiting result",
  )}${l.isNetOfFees || l.realizableMicroUsd === null ? "" : "*"}</td>
<td data-label="realizable pnl" class="num realizable-pnl">${
    l.realizablePnlMicroUsd === null
      ? l.state === "open"
        ? "no bid"
        : "awaiting result"
      : html`${signedMoney(l.realizablePnlMicroUsd)} <span class="pct">${pnlPct(l.realizablePnlPct)}</span>`
  }</td>
<td data-label="nearest rule" class="exit"${l.nearestDetail === undefined ? "" : html` title="${l.nearestDetail}"`}>${l.nearestRule ?? l.nearestDetail ?? ""}</td>
<td data-label="state" class="state">${l.state}</td>
${columns.map((c) => {
  const cell = c.cells[l.pubkey];
  return html`<td data-label="${c.label}" class="${c.key} ${cell?.isAlert ? "warn" : ""}">${cellText(cell)}</td>`;
})}</tr>`,
)}
</tbody></table>`;
}

/** Steps shown a wallet: a wallet of many positions lists the soonest, and says how many more. */
export const NEXT_SHOWN = 20;

/** What Keeper will do next, soonest first; a step without a time is due at the next poll. */
export function nextList(steps: readonly NextStep[], now: number): Html {
  if (steps.length === 0)
    return html`<p class="next-none">Nothing planned: no rule, plan or claim is pending.</p>`;
  const more = steps.length - NEXT_SHOWN;
  return html`<ul class="next">${steps
    .slice(0, NEXT_SHOWN)
    .map(
      (s) =>
        html`<li>${s.at === undefined ? "" : html`<time datetime="${iso(s.at)}">${s.at <= now ? "now" : iso(s.at)}</time> `}${s.text}</li>`,
    )}${more > 0 ? html`<li class="more">and ${more} more</li>` : ""}</ul>`;
}
