import { formatUsd, formatUsdCents } from "../core/money.js";
import { type Html, html } from "../ops/html.js";

/** Micro-USD as dollars and cents, rounded half away from zero, with thousands separators: "-$1,234.57". */
export function centsText(microUsd: bigint): string {
  const cents = formatUsdCents(microUsd);
  const negative = cents.startsWith("-");
  const [whole = "0", fraction = "00"] = (negative ? cents.slice(1) : cents).split(".");
  return `${negative ? "-" : ""}$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${fraction}`;
}

/** The exact figure, every micro-dollar: what the hover shows. */
export function exactText(microUsd: bigint): string {
  return microUsd < 0n ? `-$${formatUsd(-microUsd)}` : `$${formatUsd(microUsd)}`;
}

/** Dollars and cents, the exact figure on hover; `none` where there is no figure. */
export function money(microUsd: bigint | null | undefined, none = ""): Html {
  if (microUsd === null || microUsd === undefined) return html`${none}`;
  return html`<span class="money" title="${exactText(microUsd)}">${centsText(microUsd)}</span>`;
}

/** A signed amount: "+$1.20" or "-$0.35", coloured by its sign, exact on hover. */
export function signedMoney(microUsd: bigint | null | undefined, none = ""): Html {
  if (microUsd === null || microUsd === undefined) return html`${none}`;
  const sign = microUsd > 0n ? "+" : "";
  const tone = microUsd > 0n ? "up" : microUsd < 0n ? "down" : "";
  return html`<span class="money ${tone}" title="${exactText(microUsd)}">${sign}${centsText(microUsd)}</span>`;
}

/** A micro-USD string as the service or the ledger sends it, as `money`. */
export function moneyOf(micro: string | null | undefined, none = ""): Html {
  return money(micro !== null && micro !== undefined && /^-?\d+$/.test(micro) ? BigInt(micro) : null, none);
}

/** A price per contract, to at most 4 decimals ("$0.6525", "$0.65"); exact on hover. */
export function priceText(microUsd: bigint | null, none = ""): Html {
  if (microUsd === null) return html`${none}`;
  const [whole, fraction = "00"] = exactText(microUsd).split(".");
  const text = `${whole}.${fraction.slice(0, 4)}`;
  return html`<span class="money" title="${exactText(microUsd)}">${text}</span>`;
}
