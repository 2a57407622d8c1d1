import type { SwapOrderRecord, World } from "./world.js";

/** Orders per page of the trigger and recurring lists (pages count from 1). */
export const ORDERS_PER_PAGE = 10;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A maker's orders of one kind, `active` (open) or `history` (everything else), newest first. */
export function ordersOf(
  world: World,
  kind: SwapOrderRecord["kind"],
  maker: string,
  orderStatus: "active" | "history",
  filter: (order: SwapOrderRecord) => boolean = () => true,
): SwapOrderRecord[] {
  return [...world.swapOrders.values()]
    .filter(
      (o) => o.kind === kind && o.maker === maker && (o.status === "open") === (orderStatus === "active"),
    )
    .filter(filter)
    .sort((a, b) => b.createdAt - a.createdAt || a.order.localeCompare(b.order));
}

/** One page of a list, and how many pages there are (0 when the list is empty). */
export function pageOf<T>(items: readonly T[], page: number): { items: T[]; totalPages: number } {
  const from = (page - 1) * ORDERS_PER_PAGE;
  return {
    items: items.slice(from, from + ORDERS_PER_PAGE),
    totalPages: Math.ceil(items.length / ORDERS_PER_PAGE),
  };
}

/** A raw amount in whole tokens ("1.5"), as the lists show amounts; raw digits for an unknown mint. */
function uiAmount(world: World, mint: string, raw: bigint): string {
  const decimals = world.tokens.byMintAddress(mint)?.decimals ?? 0;
  if (decimals === 0) return raw.toString();
  const digits = raw.toString().padStart(decimals + 1, "0");
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return fraction === "" ? digits.slice(0, -decimals) : `${digits.slice(0, -decimals)}.${fraction}`;
}

/** A trigger order as GET /trigger/v1/getTriggerOrders lists it. */
export function triggerOrderView(world: World, o: SwapOrderRecord) {
  const taking = o.outAmountRaw ?? 0n;
  const open = o.status === "open";
  return {
    orderKey: o.order,
    userPubkey: o.maker,
    inputMint: o.inputMint,
    outputMint: o.outputMint,
    makingAmount: uiAmount(world, o.inputMint, o.inAmountRaw),
    takingAmount: uiAmount(world, o.outputMint, taking),
    rawMakingAmount: o.inAmountRaw.toString(),
    rawTakingAmount: taking.toString(),
    remainingMakingAmount: uiAmount(world, o.inputMint, open || o.status === "expired" ? o.inAmountRaw : 0n),
    status: o.status,
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.closedAt ?? o.createdAt),
    expiredAt: o.expiredAt ?? null,
    openTx: o.signature,
    closeTx: o.closeSignature ?? null,
  };
}

/** A recurring order as GET /recurring/v1/getRecurringOrders lists it. */
export function recurringOrderView(world: World, o: SwapOrderRecord) {
  return {
    orderKey: o.order,
    userPubkey: o.maker,
    inputMint: o.inputMint,
    outputMint: o.outputMint,
    rawInDeposited: o.inAmountRaw.toString(),
    inDeposited: uiAmount(world, o.inputMint, o.inAmountRaw),
    // The sandbox trades nothing: nothing of the deposit is used, nothing received.
    inUsed: "0",
    outReceived: "0",
    ...(o.intervalSeconds === undefined ? {} : { cycleFrequency: o.intervalSeconds }),
    ...(o.numberOfOrders === undefined ? {} : { numberOfOrders: o.numberOfOrders }),
    status: o.status,
    userClosed: o.status === "cancelled",
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.closedAt ?? o.createdAt),
    openTx: o.signature,
    closeTx: o.closeSignature ?? null,
  };
}
