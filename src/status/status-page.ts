import { contractsText } from "../core/contracts.js";
import { intentAmountText } from "../core/intent-amount.js";
import type { StatusCell, StatusView } from "../core/strategy-hooks.js";
import { LEDGER_STATUSES, type LedgerRow } from "../keeper/state/ledger.js";
import { type Html, html } from "../ops/html.js";
import { moneyOf } from "./money-text.js";
import { nextList, positionsTable, totalsBlock } from "./status-figures.js";
import type { LedgerFilter, StatusPageData, WalletView } from "./status-page-data.js";
import { LEDGER_SCAN_LIMIT } from "./status-report.js";
import { activityChart, valueChart } from "./svg-charts.js";

export interface StatusPageOptions {
  /** The operator token is configured: show pause, resume, retry and the link to /queues. */
  isAdmin: boolean;
}

const iso = (seconds: number | undefined) =>
  seconds ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z") : "";

function ago(seconds: number | undefined, now: number): string {
  if (seconds === undefined) return "never";
  const age = Math.max(0, now - seconds);
  return age < 120
    ? `${age}s ago`
    : age < 7_200
      ? `${Math.floor(age / 60)}m ago`
      : `${Math.floor(age / 3600)}h ago`;
}

const NEEDS_LOOK = new Set(["refused", "failed"]);

/** The whole status page: plain HTML, every value escaped; the only script is /status.js (buttons). */
export function renderStatusPage(data: StatusPageData, options: StatusPageOptions): string {
  const { status } = data;
  const now = data.generatedAt;
  const paused = status.paused;
  const tripped = status.protections.tripped;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Keeper status</title>
<link rel="stylesheet" href="/status.css">
${options.isAdmin ? html`<script src="/status.js" defer></script>` : ""}
</head>
<body>
<header>
  <h1>Keeper</h1>
  <p class="summary">
    <span id="mode">mode <b>${status.mode}</b></span>
    <span id="paused" class="${paused.paused ? "bad" : "ok"}">${
      paused.paused
        ? html`PAUSED since ${iso(paused.since)}${paused.reason ? html` (${paused.reason})` : ""}`
        : "running"
    }</span>
    <span id="breakers-summary" class="${tripped.length > 0 ? "bad" : "ok"}">${
      tripped.length > 0 ? `breakers TRIPPED: ${tripped.join(", ")}` : "no breaker tripped"
    }</span>
    <span>as of ${iso(now)}</span>
  </p>
  <nav><a href="/">status</a> · <a href="/metrics">metrics</a> · <a href="/healthz">healthz</a> · <a href="/readyz">readyz</a>${
    options.isAdmin ? html` · <a href="/queues/">queues (bull-board)</a>` : ""
  }</nav>
</header>
${options.isAdmin ? adminBar(paused.paused) : ""}
<main>
${fleetSection(data)}
${needsLookSection(data.needsLook, options)}
<section id="wallets"><h2>Wallets</h2>
${data.wallets.map((w) => walletSection(w, now, data))}
</section>
<section id="breakers"><h2>Circuit breakers</h2>
<table><thead><tr><th>breaker</th><th>state</th><th>until</th><th>detail</th></tr></thead><tbody>
${status.protections.breakers.map(
  (b) =>
    html`<tr class="${b.isTripped ? "bad" : ""}"><td>${b.name}</td><td>${
      !b.isEnabled ? "off" : b.isTripped ? "TRIPPED" : "ok"
    }</td><td>${iso(b.until)}</td><td>${b.detail}</td></tr>`,
)}
</tbody></table></section>
<section id="queues"><h2>Queues</h2>
<table><thead><tr><th>queue</th><th>waiting</th><th>active</th><th>delayed</th><th>failed</th><th>completed</th></tr></thead><tbody>
${Object.entries(status.queues).map(
  ([name, c]) =>
    html`<tr><td>${name}</td><td>${c.waiting}</td><td>${c.active}</td><td>${c.delayed}</td><td class="${
      (c.failed ?? 0) > 0 ? "warn" : ""
    }">${c.failed}</td><td>${c.completed}</td></tr>`,
)}
</tbody></table></section>
${ledgerSection(data, options)}
</main>
</body>
</html>
`;
  return page.text;
}

/** The fleet at a glance: every wallet's totals added, and the charts over time. */
function fleetSection(data: StatusPageData): Html {
  return html`<section id="fleet"><h2>Fleet: ${data.wallets.length} wallet(s)</h2>
${totalsBlock(data.fleet, "fleet-totals")}
<div class="charts">
<figure><figcaption>Claims and exits a day (UTC), in dollars brought in</figcaption>${activityChart(data.activity)}</figure>
<figure><figcaption>Fleet value at the mark${
    data.valueSeries.length < 2
      ? " (fills as polls record it: a sample every 10 minutes, 7 days kept)"
      : ", a sample every 10 minutes"
  }</figcaption>${valueChart(data.valueSeries)}</figure>
</div>
</section>`;
}

function adminBar(isPaused: boolean): Html {
  return html`<section id="admin" class="admin">
  <label>Operator token <input id="admin-token" type="password" autocomplete="off" size="24"></label>
  ${
    isPaused
      ? html`<button type="button" data-action="resume">Resume</button>`
      : html`<label>reason <input id="pause-reason" type="text" value="paused from the status page" size="28"></label>
  <button type="button" data-action="pause">Pause</button>`
  }
  <span id="admin-message" role="status"></span>
</section>`;
}

function intentRow(r: LedgerRow, options: StatusPageOptions, withRetry: boolean): Html {
  const why = [r.reason, r.error].filter(Boolean).join(" · ");
  return html`<tr class="${NEEDS_LOOK.has(r.status) ? "bad" : r.status === "confirmed" ? "good" : ""}" data-key="${r.key}">
<td class="mono">${r.key}</td><td>${r.kind}</td><td class="mono short">${r.wallet}</td><td>${r.strategy}</td>
<td class="status">${r.status}</td><td class="amount" title="${intentAmountText(r.intent, r.amountMicroUsd)}">${moneyOf(r.amountMicroUsd)}</td><td>${r.tries}</td>
<td class="mono short">${r.signature ?? ""}</td><td class="why">${why}</td><td>${iso(r.updatedAt)}</td>${
    withRetry
      ? html`<td>${
          options.isAdmin && NEEDS_LOOK.has(r.status)
            ? html`<button type="button" data-action="retry" data-key="${r.key}">Retry</button>`
            : ""
        }</td>`
      : ""
  }</tr>`;
}

const INTENT_HEAD = html`<th>intent</th><th>kind</th><th>wallet</th><th>strategy</th><th>status</th><th>amount</th><th>tries</th><th>signature</th><th>reason / error</th><th>updated</th>`;

function needsLookSection(rows: readonly LedgerRow[], options: StatusPageOptions): Html {
  if (rows.length === 0)
    return html`<section id="needs-look"><h2>Refused and failed intents</h2><p class="ok">none</p></section>`;
  return html`<section id="needs-look" class="alert"><h2>Refused and failed intents (${rows.length})</h2>
<p>Refused means the signer found the transaction wrong; failed means it did not land or could not be built.
Look at the reason, fix what needs fixing, then retry${options.isAdmin ? "" : html` (<code>keeper retry &lt;intent&gt;</code>)`}.</p>
<table><thead><tr>${INTENT_HEAD}<th></th></tr></thead><tbody>
${rows.map((r) => intentRow(r, options, true))}
</tbody></table></section>`;
}

function walletSection(
  w: WalletView,
  now: number,
  { stalePollSeconds }: Pick<StatusPageData, "stalePollSeconds">,
): Html {
  const views = w.strategies.flatMap((s) => ("view" in s ? [s.view] : []));
  const columns = views.flatMap((v) => v.positionColumns ?? []);
  const isStale = w.lastPollAt === undefined || now - w.lastPollAt > stalePollSeconds;
  return html`<article class="wallet" data-wallet="${w.wallet}">
<h3>${w.label ? html`${w.label} ` : ""}<span class="mono">${w.wallet}</span></h3>
<p class="${isStale ? "bad" : ""}">last successful poll: <b class="last-poll">${
    w.lastPollAt ? `${iso(w.lastPollAt)} (${ago(w.lastPollAt, now)})` : "never"
  }</b>${isStale ? html` · STALE (none within ${stalePollSeconds}s)` : ""}</p>
${totalsBlock(w.totals)}
<h4>Positions (${w.positions.length})</h4>
<p class="seen">${
    w.positionsAt === undefined
      ? "No poll has recorded this wallet's positions yet."
      : html`As the last poll saw them, ${iso(w.positionsAt)} (${ago(w.positionsAt, now)}); the page asks the service nothing.`
  }</p>
${w.lines.length === 0 ? html`<p>none</p>` : html`<div class="scroll">${positionsTable(w.lines, columns, cellText)}</div>`}
<h4>Next</h4>
${nextList(w.next, now)}
<h4>Open orders (${w.orders.length + w.triggerOrders.length})</h4>
<p class="seen">${
    w.ordersAt === undefined
      ? "Pending prediction orders: no orders poll recorded yet."
      : html`Pending prediction orders as the last orders poll listed them, ${iso(w.ordersAt)} (${ago(w.ordersAt, now)}); limit orders from the ledger.`
  }</p>
${
  w.orders.length + w.triggerOrders.length === 0
    ? html`<p>none</p>`
    : html`<table><thead><tr><th>order</th><th>what</th><th>contracts</th><th>filled</th><th>status</th><th>created</th></tr></thead><tbody>
${w.orders.map(
  (o) =>
    html`<tr><td class="mono short">${o.pubkey}</td><td>${o.isBuy ? "buy" : "sell"} ${o.isYes ? "YES" : "NO"} · ${
      o.marketMetadata.title ?? o.marketId
    }</td><td>${contractsText(o)}</td><td>${contractsText({ contracts: o.filledContracts, contractsMicro: o.filledContractsMicro })}</td><td>${o.status}</td><td>${iso(o.createdAt)}</td></tr>`,
)}
${w.triggerOrders.map(
  (t) =>
    html`<tr><td class="mono short">${t.order}</td><td>limit order (${t.key})</td><td></td><td></td><td>open</td><td></td></tr>`,
)}
</tbody></table>`
}
${views.map(strategyTables)}
${w.strategies.map((s) => ("error" in s ? html`<p class="bad">${s.strategy}: ${s.error}</p>` : ""))}
</article>`;
}

function cellText(cell: StatusCell | undefined): string {
  if (cell === undefined) return "";
  return cell.at === undefined ? (cell.text ?? "") : iso(cell.at);
}

/** A strategy's own tables of a wallet (its `statusView` hook), each under its title with its row count. */
function strategyTables(view: StatusView): Html[] {
  return (view.tables ?? []).map(
    (t) => html`<h4>${t.title} (${t.rows.length})</h4>
${
  t.rows.length === 0
    ? html`<p>none</p>`
    : html`<table><thead><tr>${t.columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>
${t.rows.map((row) => html`<tr>${row.map(tableCell)}</tr>`)}
</tbody></table>`
}
`,
  );
}

function tableCell(cell: StatusCell): Html {
  const classes = [...(cell.isId ? ["mono", "short"] : []), ...(cell.isAlert ? ["warn"] : [])].join(" ");
  return classes === ""
    ? html`<td>${cellText(cell)}</td>`
    : html`<td class="${classes}">${cellText(cell)}</td>`;
}

function ledgerHref(filter: LedgerFilter, page: number): string {
  const query = new URLSearchParams();
  if (filter.status) query.set("status", filter.status);
  if (filter.kind) query.set("kind", filter.kind);
  if (filter.wallet) query.set("wallet", filter.wallet);
  if (page > 1) query.set("page", String(page));
  const text = query.toString();
  return `/${text ? `?${text}` : ""}#ledger`;
}

function select(name: string, values: readonly string[], chosen: string | undefined): Html {
  return html`<label>${name} <select name="${name}"><option value="">any</option>${values.map(
    (v) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${v}</option>`,
  )}</select></label>`;
}

function ledgerSection(data: StatusPageData, options: StatusPageOptions): Html {
  const { rows, matching, filter, pages } = data.ledger;
  return html`<section id="ledger"><h2>Ledger</h2>
<form method="get" action="/#ledger">
${select("status", LEDGER_STATUSES, filter.status)}
${select("kind", data.kinds, filter.kind)}
${select(
  "wallet",
  data.wallets.map((w) => w.wallet),
  filter.wallet,
)}
<button type="submit">Filter</button>
</form>
<p>${matching} matching of the newest ${Math.min(data.status.recent.length, LEDGER_SCAN_LIMIT)} intents, newest first; page ${filter.page} of ${pages}.
${filter.page > 1 ? html`<a rel="prev" href="${ledgerHref(filter, filter.page - 1)}">newer</a>` : ""}
${filter.page < pages ? html`<a rel="next" href="${ledgerHref(filter, filter.page + 1)}">older</a>` : ""}</p>
<table><thead><tr>${INTENT_HEAD}<th></th></tr></thead><tbody>
${rows.map((r) => intentRow(r, options, true))}
</tbody></table></section>`;
}
