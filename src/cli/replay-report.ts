import { formatContracts } from "../core/contracts.js";
import { formatUsd } from "../core/money.js";
import type { ReplayExit, ReplayResult } from "../keeper/replay/engine.js";
import type { GridPoint } from "../keeper/replay/grid.js";
import { formatTable, isoTime } from "./output.js";

/**
 * What `keeper replay` prints, from the result alone: no clock, no locale, groups and counts in a
 * sorted order, money exact (`formatUsd`). The same result always prints the same bytes.
 */

const usd = (micro: bigint) => `$${formatUsd(micro)}`;
const signedUsd = (micro: bigint) => (micro < 0n ? `-$${formatUsd(-micro)}` : `+$${formatUsd(micro)}`);
/** "1 exit", "2 exits". */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
/** Code-unit order, the same on every machine (no locale). */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byKey = <T>(entries: Iterable<[string, T]>) => [...entries].sort(([a], [b]) => compareText(a, b));

export interface ExitTotals {
  readonly exits: number;
  readonly realized: bigint;
  readonly held: bigint;
  /** Exits whose held value is an estimate: the recording ends before their market resolved. */
  readonly unresolved: number;
}

export function exitTotals(exits: readonly ReplayExit[]): ExitTotals {
  return {
    exits: exits.length,
    realized: exits.reduce((sum, e) => sum + e.net, 0n),
    held: exits.reduce((sum, e) => sum + e.held.value, 0n),
    unresolved: exits.filter((e) => e.held.basis.startsWith("unresolved")).length,
  };
}

function heldNote(totals: ExitTotals): string {
  if (totals.unresolved === 0) return "";
  return ` (${totals.unresolved} unresolved at the end: valued at their last bid)`;
}

export function formatReplay(result: ReplayResult, dir: string): string {
  const lines = [
    `replay of ${dir}: ${count(result.polls, "poll")} of ${count(result.wallets.length, "wallet")}, ${isoTime(result.from)} to ${isoTime(result.to)}`,
    "sells fill at the recorded bid less 0.5% protocol + 1% venue fees ($5 smallest order); claims pay $1 a winning contract",
    "held: the same position kept to its market's resolution, or to the recording's end at its last bid",
  ];
  const groups = new Map<string, ReplayExit[]>();
  for (const exit of result.exits) {
    const key = `${exit.strategy} / ${exit.rule}`;
    groups.set(key, [...(groups.get(key) ?? []), exit]);
  }
  for (const [rule, exits] of byKey(groups)) {
    const totals = exitTotals(exits);
    lines.push(
      "",
      `${rule}: ${count(totals.exits, "exit")}, realized ${usd(totals.realized)}, held ${usd(totals.held)}, vs held ${signedUsd(totals.realized - totals.held)}${heldNote(totals)}`,
    );
    for (const e of exits)
      lines.push(
        `  ${isoTime(e.at)}  wallet ${e.wallet}  position ${e.position}  market ${e.marketId} ${e.isYes ? "YES" : "NO"}`,
        `    ${formatContracts(e.contractsMicro)} contracts at bid ${usd(e.bid)}: ${usd(e.gross)} less fees ${usd(e.fees)} = ${usd(e.net)} (cost ${usd(e.cost)}); held ${usd(e.held.value)} (${e.held.basis})`,
        `    ${e.reason}`,
      );
  }
  if (result.claims.length > 0) {
    const paid = result.claims.reduce((sum, c) => sum + c.payout, 0n);
    lines.push("", `claims: ${result.claims.length}, paid ${usd(paid)}`);
    for (const c of result.claims)
      lines.push(
        `  ${isoTime(c.at)}  ${c.strategy}  wallet ${c.wallet}  position ${c.position}  ${usd(c.payout)}`,
      );
  }
  if (result.exits.length === 0 && result.claims.length === 0)
    lines.push("", "no rule fired over the recording");
  const unfilledKey = (u: ReplayResult["unfilled"][number]) =>
    `${u.wallet} ${u.position} ${u.strategy} ${u.rule}`;
  const unfilled = [...result.unfilled].sort(
    (a, b) => a.firstAt - b.firstAt || compareText(unfilledKey(a), unfilledKey(b)),
  );
  for (const u of unfilled)
    lines.push(
      `not filled: ${u.strategy} / ${u.rule} on position ${u.position} from ${isoTime(u.firstAt)}: ${u.why} (${count(u.polls, "poll")})`,
    );
  for (const [what, n] of byKey(Object.entries(result.notSimulated)))
    lines.push(`not simulated: ${what} x${n} (replay fills sells and claims only)`);
  for (const [what, n] of byKey(Object.entries(result.errors)))
    lines.push(`strategy failed: ${what} (${count(n, "poll")})`);
  return lines.join("\n");
}

export function formatGrid(
  rows: ReadonlyArray<{ point: GridPoint; result: ReplayResult }>,
  dir: string,
): string {
  const table = rows.map(({ point, result }) => {
    const totals = exitTotals(result.exits);
    return {
      ...Object.fromEntries(point.map(([key, value]) => [key, String(value)])),
      exits: String(totals.exits),
      realized: usd(totals.realized),
      held: usd(totals.held),
      "vs held": signedUsd(totals.realized - totals.held),
      unresolved: String(totals.unresolved),
    };
  });
  const first = rows[0]?.result;
  return [
    `replay grid of exit-rules over ${dir}: ${count(first?.polls ?? 0, "poll")} of ${count(first?.wallets.length ?? 0, "wallet")}, ${isoTime(first?.from)} to ${isoTime(first?.to)}`,
    "held: the exited positions kept instead (unresolved: valued at their last recorded bid)",
    formatTable(table),
  ].join("\n");
}
