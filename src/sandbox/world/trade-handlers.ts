import {
  ComputeBudgetProgram,
  PublicKey,
  type TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import type { z } from "zod";
import type { ApiInstruction } from "../../core/schemas/common.js";
import type * as s from "../../core/schemas/index.js";
import type { WorldChainPort } from "./chain-port.js";
import { sandboxMemo } from "./chain-port.js";
import { badRequest, notFound } from "./errors.js";
import { INVITES_PER_PAGE, invitesOf } from "./invites.js";
import { MEMO_PROGRAM_ID } from "./offline-chain.js";
import { orderAddress } from "./order-address.js";
import { ordersOf, pageOf, recurringOrderView, triggerOrderView } from "./order-views.js";
import type { PendingActions, PendingRequest, RequestKind } from "./pending-actions.js";
import { derivePubkey } from "./rng.js";
import type { CatalogueToken } from "./tokens.js";
import { isCancellable, type SwapOrderRecord, type World } from "./world.js";

type Out<S extends z.ZodType> = z.output<S>;

const MICRO_PER_USD = 1_000_000n;
/** Service minimums (api-gaps). */
const TRIGGER_MIN_MICRO = 5n * MICRO_PER_USD;
const RECURRING_MIN_TOTAL_MICRO = 100n * MICRO_PER_USD;
const RECURRING_MIN_PER_ORDER_MICRO = 50n * MICRO_PER_USD;
const RECURRING_MIN_ORDERS = 2;
const SWAP_FEE_BPS = 20n;
const SWAP_LABEL = "Sandbox AMM";

function instructionJson(ix: TransactionInstruction): ApiInstruction {
  return {
    programId: ix.programId.toBase58(),
    accounts: ix.keys.map((k) => ({
      pubkey: k.pubkey.toBase58(),
      isWritable: k.isWritable,
      isSigner: k.isSigner,
    })),
    data: Buffer.from(ix.data).toString("base64"),
  };
}

function catalogued(world: World, mint: string, param: string): CatalogueToken {
  const entry = world.tokens.byMintAddress(mint);
  if (entry === undefined) throw badRequest(param, "unknown_mint", "is not a token this service routes");
  return entry;
}

/** Raw amount of `to` worth `valueMicro`, rounded down. */
function rawForValue(to: CatalogueToken, valueMicro: bigint): bigint {
  return (valueMicro * 10n ** BigInt(to.decimals)) / to.priceMicro;
}

/** The memos a signed transaction carries, legacy or v0. */
function memosOf(base64: string): string[] {
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  } catch {
    throw badRequest("signedTransaction", "invalid_transaction", "is not a base64 Solana transaction");
  }
  const keys = tx.message.staticAccountKeys;
  return tx.message.compiledInstructions
    .filter((ix) => keys[ix.programIdIndex]?.equals(MEMO_PROGRAM_ID) === true)
    .map((ix) => Buffer.from(ix.data).toString("utf8"));
}

function requireRequest(
  pending: PendingActions,
  requestId: string,
  kinds: readonly RequestKind[],
): PendingRequest {
  const request = pending.requests.get(requestId);
  if (request === undefined || !kinds.includes(request.kind))
    throw badRequest("requestId", "unknown_request", "does not name a transaction built by this area");
  return request;
}

/** Executes one of the request's transactions (a cancel of several orders has one per order). */
async function execute(
  chain: WorldChainPort,
  request: PendingRequest,
  signedTransaction: string,
): Promise<{ signature: string; ok: boolean; error?: string }> {
  const memos = memosOf(signedTransaction);
  const ref = request.refs.find((r) => memos.includes(sandboxMemo(request.kind, r)));
  if (ref === undefined)
    throw badRequest(
      "signedTransaction",
      "request_mismatch",
      "is not the transaction built for this requestId",
    );
  const done = request.executed.get(ref);
  if (done !== undefined) return done;
  const outcome = await chain.submitSigned(signedTransaction);
  if (outcome.err !== null && outcome.err !== undefined)
    return {
      signature: outcome.signature,
      ok: false,
      error: typeof outcome.err === "string" ? outcome.err : JSON.stringify(outcome.err),
    };
  const result = { signature: outcome.signature, ok: true };
  request.executed.set(ref, result);
  return result;
}

/** The maker's order of `kind` that may be cancelled, or the refusal naming the field to blame. */
/** A computeUnitPrice in micro-lamports goes into the transaction; `auto` (or none) is the chain's default. */
function requestedPrice(computeUnitPrice: string | undefined): { computeUnitPrice?: number } {
  return computeUnitPrice === undefined || computeUnitPrice === "auto"
    ? {}
    : { computeUnitPrice: Number(computeUnitPrice) };
}

function cancellableOrder(
  world: World,
  kind: SwapOrderRecord["kind"],
  order: string,
  maker: { readonly field: string; readonly pubkey: string },
  orderField = "order",
): SwapOrderRecord {
  const record = world.swapOrders.get(order);
  if (record === undefined || record.kind !== kind) throw notFound(`${kind} order`, order, orderField);
  if (record.maker !== maker.pubkey)
    throw badRequest(maker.field, "maker_mismatch", `is not the maker of order ${order}`);
  if (!isCancellable(record))
    throw badRequest(orderField, "order_not_open", `order ${order} is ${record.status}`);
  return record;
}

function recurringPlan(world: World, body: Out<typeof s.recurringCreateBody>, input: CatalogueToken) {
  const time = body.params.time;
  if (time !== undefined) {
    const total = world.tokens.valueMicro(input.mint, BigInt(time.inAmount)) ?? 0n;
    if (time.numberOfOrders < RECURRING_MIN_ORDERS)
      throw badRequest(
        "params.time.numberOfOrders",
        "below_minimum",
        `must be at least ${RECURRING_MIN_ORDERS}`,
      );
    if (total < RECURRING_MIN_TOTAL_MICRO)
      throw badRequest(
        "params.time.inAmount",
        "below_minimum",
        `is worth ${total} micro-USD; the minimum total is $100`,
      );
    if (total / BigInt(time.numberOfOrders) < RECURRING_MIN_PER_ORDER_MICRO)
      throw badRequest(
        "params.time.numberOfOrders",
        "below_minimum",
        "makes orders worth less than $50 each",
      );
    return { amountRaw: BigInt(time.inAmount) };
  }
  const price = body.params.price;
  if (price === undefined)
    throw badRequest("params", "invalid_params", "must hold exactly one of time or price");
  const total = world.tokens.valueMicro(input.mint, BigInt(price.depositAmount)) ?? 0n;
  if (total < RECURRING_MIN_TOTAL_MICRO)
    throw badRequest(
      "params.price.depositAmount",
      "below_minimum",
      `is worth ${total} micro-USD; the minimum total is $100`,
    );
  // incrementUsdcValue is dollars per order.
  const perOrderMicro = BigInt(Math.floor(price.incrementUsdcValue * 1_000_000));
  if (perOrderMicro < RECURRING_MIN_PER_ORDER_MICRO)
    throw badRequest("params.price.incrementUsdcValue", "below_minimum", "must be at least $50 an order");
  if (total / perOrderMicro < BigInt(RECURRING_MIN_ORDERS))
    throw badRequest("params.price.depositAmount", "below_minimum", "must cover at least 2 orders");
  return { amountRaw: BigInt(price.depositAmount) };
}

/** How the service behaves beyond the world's rules: a hostile mode for tests of the client's signer. */
export interface ServiceBehaviour {
  /** Swap and order builds send the user's input to a stranger; swap quotes ask for no minimum output. */
  redirectFunds(): boolean;
}

const HONEST: ServiceBehaviour = { redirectFunds: () => false };

export function tradeHandlers(
  world: World,
  chain: WorldChainPort,
  pending: PendingActions,
  behaviour: ServiceBehaviour = HONEST,
) {
  return {
    ...swapHandlers(world, chain, pending, behaviour),
    ...triggerHandlers(world, chain, pending, behaviour),
    ...recurringHandlers(world, chain, pending, behaviour),
    inviteHistory({ params }: { params: Out<typeof s.inviteHistoryParams> }) {
      const page = params.page ?? 1;
      const isSandboxWallet = world.walletIndexOf(params.address) !== undefined;
      const mints = [world.tokens.byKey("usdc")?.mint ?? "", world.tokens.byKey("sol")?.mint ?? ""];
      const all = invitesOf(world.seed, params.address, world.genesisSeconds, { isSandboxWallet, mints });
      const from = (page - 1) * INVITES_PER_PAGE;
      return {
        invites: all.slice(from, from + INVITES_PER_PAGE),
        hasMoreData: from + INVITES_PER_PAGE < all.length,
      };
    },
  };
}

/** Token search and swap builds. */
function swapHandlers(
  world: World,
  chain: WorldChainPort,
  pending: PendingActions,
  behaviour: ServiceBehaviour,
) {
  return {
    searchTokens({ params }: { params: Out<typeof s.tokenSearchParams> }) {
      return world.tokens.search(params.query);
    },

    async buildSwap({ params }: { params: Out<typeof s.swapBuildParams> }) {
      const input = catalogued(world, params.inputMint, "inputMint");
      const output = catalogued(world, params.outputMint, "outputMint");
      if (input.mint === output.mint)
        throw badRequest("outputMint", "same_mint", "must differ from inputMint");
      const inAmountRaw = BigInt(params.amount);
      const valueMicro = world.tokens.valueMicro(input.mint, inAmountRaw) ?? 0n;
      const platformFeeBps = BigInt(params.platformFeeBps ?? 0);
      const grossOut = rawForValue(output, (valueMicro * (10_000n - SWAP_FEE_BPS)) / 10_000n);
      const outAmountRaw = grossOut - (grossOut * platformFeeBps) / 10_000n;
      if (outAmountRaw <= 0n) throw badRequest("amount", "amount_too_small", "is too small to route");
      const slippageBps = params.slippageBps ?? 50;
      const redirectFunds = behaviour.redirectFunds();
      // Hostile: a quote that asks for no output at all.
      const threshold = redirectFunds ? 0n : (outAmountRaw * BigInt(10_000 - slippageBps)) / 10_000n;
      const taker = new PublicKey(params.taker);
      const ref = pending.nextId("swap");
      const legs = await chain.buildSwapLegs({
        taker,
        inputMint: new PublicKey(input.mint),
        outputMint: new PublicKey(output.mint),
        inAmountRaw,
        outAmountRaw,
        ref,
        ...(redirectFunds ? { redirectFunds } : {}),
      });
      const label = params.dexes?.split(",")[0]?.trim() || SWAP_LABEL;
      return {
        inputMint: input.mint,
        outputMint: output.mint,
        inAmount: String(inAmountRaw),
        outAmount: String(outAmountRaw),
        otherAmountThreshold: String(threshold),
        swapMode: "ExactIn",
        slippageBps,
        routePlan: [
          {
            swapInfo: {
              ammKey: derivePubkey(`amm:${input.key}:${output.key}`, world.seed).toBase58(),
              label,
              inputMint: input.mint,
              outputMint: output.mint,
              inAmount: String(inAmountRaw),
              outAmount: String(outAmountRaw),
            },
            percent: 100,
            bps: 10_000,
            usdValue: Number(valueMicro) / 1_000_000,
          },
        ],
        computeBudgetInstructions: [
          instructionJson(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 })),
        ],
        setupInstructions: legs.setupInstructions.map(instructionJson),
        swapInstruction: instructionJson(legs.swapInstruction),
        cleanupInstruction:
          legs.cleanupInstruction === null ? null : instructionJson(legs.cleanupInstruction),
        otherInstructions: legs.otherInstructions.map(instructionJson),
        // As the live service: null, not {}, when the route needs no lookup table.
        addressesByLookupTableAddress:
          Object.keys(legs.addressesByLookupTableAddress).length === 0
            ? null
            : Object.fromEntries(
                Object.entries(legs.addressesByLookupTableAddress).map(([table, addresses]) => [
                  table,
                  [...addresses],
                ]),
              ),
        blockhashWithMetadata: {
          blockhash: [...legs.blockhash],
          lastValidBlockHeight: legs.lastValidBlockHeight,
        },
      };
    },
  };
}

/** Trigger (limit) orders: build, cancel, list and execute. */
function triggerHandlers(
  world: World,
  chain: WorldChainPort,
  pending: PendingActions,
  behaviour: ServiceBehaviour,
) {
  return {
    async createTriggerOrder({ body }: { body: Out<typeof s.triggerCreateBody> }) {
      const input = catalogued(world, body.inputMint, "inputMint");
      catalogued(world, body.outputMint, "outputMint");
      const makingRaw = BigInt(body.params.makingAmount);
      const valueMicro = world.tokens.valueMicro(input.mint, makingRaw) ?? 0n;
      if (valueMicro < TRIGGER_MIN_MICRO)
        throw badRequest(
          "params.makingAmount",
          "order_too_small",
          `is worth ${valueMicro} micro-USD; the minimum order is $5`,
        );
      const request = pending.addRequest("trigger", (id) => orderAddress("trigger", id));
      const order = request.ref;
      pending.orderDrafts.set(order, {
        kind: "trigger",
        order,
        maker: body.maker,
        inputMint: body.inputMint,
        outputMint: body.outputMint,
        inAmountRaw: makingRaw,
        outAmountRaw: BigInt(body.params.takingAmount),
        ...(body.params.expiredAt === undefined ? {} : { expiredAt: Number(body.params.expiredAt) }),
      });
      const built = await chain.buildOrderEscrow({
        kind: "trigger",
        maker: new PublicKey(body.maker),
        inputMint: new PublicKey(body.inputMint),
        amountRaw: makingRaw,
        orderRef: order,
        ...requestedPrice(body.computeUnitPrice),
        ...(behaviour.redirectFunds() ? { redirectFunds: true } : {}),
      });
      return { requestId: request.requestId, transaction: built.transaction, order };
    },

    async cancelTriggerOrder({ body }: { body: Out<typeof s.triggerCancelBody> }) {
      cancellableOrder(world, "trigger", body.order, { field: "maker", pubkey: body.maker });
      const request = pending.addRequest("trigger-cancel", () => body.order);
      const built = await chain.buildTriggerCancel({
        maker: new PublicKey(body.maker),
        order: new PublicKey(body.order),
        ...requestedPrice(body.computeUnitPrice),
      });
      return { requestId: request.requestId, transaction: built.transaction };
    },

    async cancelTriggerOrders({ body }: { body: Out<typeof s.triggerCancelManyBody> }) {
      const orders =
        body.orders === undefined
          ? [...world.swapOrders.values()]
              .filter((o) => o.kind === "trigger" && o.maker === body.maker && isCancellable(o))
              .map((o) => o.order)
          : body.orders.map(
              (order, i) =>
                cancellableOrder(
                  world,
                  "trigger",
                  order,
                  { field: "maker", pubkey: body.maker },
                  `orders[${i}]`,
                ).order,
            );
      if (orders.length === 0)
        throw badRequest("maker", "no_open_orders", "has no open trigger orders to cancel");
      if (new Set(orders).size !== orders.length)
        throw badRequest("orders", "duplicate_order", "names an order more than once");
      const request = pending.addRequest("trigger-cancel", () => orders);
      const transactions: string[] = [];
      for (const order of orders) {
        const built = await chain.buildTriggerCancel({
          maker: new PublicKey(body.maker),
          order: new PublicKey(order),
          ...requestedPrice(body.computeUnitPrice),
        });
        transactions.push(built.transaction);
      }
      return { requestId: request.requestId, transactions };
    },

    getTriggerOrders({ params }: { params: Out<typeof s.triggerOrdersParams> }) {
      const all = ordersOf(
        world,
        "trigger",
        params.user,
        params.orderStatus,
        (o) =>
          (params.inputMint === undefined || o.inputMint === params.inputMint) &&
          (params.outputMint === undefined || o.outputMint === params.outputMint),
      );
      const page = params.page ?? 1;
      const { items, totalPages } = pageOf(all, page);
      return {
        user: params.user,
        orderStatus: params.orderStatus,
        orders: items.map((o) => triggerOrderView(world, o)),
        page,
        totalPages,
      };
    },

    async executeTrigger({ body }: { body: Out<typeof s.executeBody> }) {
      const request = requireRequest(pending, body.requestId, ["trigger", "trigger-cancel"]);
      const result = await execute(chain, request, body.signedTransaction);
      // As the live service may: a success without `code`.
      return result.ok
        ? { signature: result.signature, status: "Success" as const }
        : {
            signature: result.signature,
            status: "Failed" as const,
            code: -1,
            error: result.error ?? "transaction failed",
          };
    },
  };
}

/** Recurring (DCA) orders: build, cancel, list and execute. */
function recurringHandlers(
  world: World,
  chain: WorldChainPort,
  pending: PendingActions,
  behaviour: ServiceBehaviour,
) {
  return {
    async createRecurringOrder({ body }: { body: Out<typeof s.recurringCreateBody> }) {
      const input = catalogued(world, body.inputMint, "inputMint");
      catalogued(world, body.outputMint, "outputMint");
      const { amountRaw } = recurringPlan(world, body, input);
      const request = pending.addRequest("recurring", (id) => orderAddress("recurring", id));
      const order = request.ref;
      const time = body.params.time;
      pending.orderDrafts.set(order, {
        kind: "recurring",
        order,
        maker: body.user,
        inputMint: body.inputMint,
        outputMint: body.outputMint,
        inAmountRaw: amountRaw,
        outAmountRaw: null,
        recurringType: time === undefined ? "price" : "time",
        ...(time === undefined
          ? { intervalSeconds: body.params.price?.interval ?? 0 }
          : { numberOfOrders: time.numberOfOrders, intervalSeconds: time.interval }),
      });
      const built = await chain.buildOrderEscrow({
        kind: "recurring",
        maker: new PublicKey(body.user),
        inputMint: new PublicKey(body.inputMint),
        amountRaw,
        orderRef: order,
        ...(behaviour.redirectFunds() ? { redirectFunds: true } : {}),
      });
      return { requestId: request.requestId, transaction: built.transaction };
    },

    async cancelRecurringOrder({ body }: { body: Out<typeof s.recurringCancelBody> }) {
      const record = cancellableOrder(world, "recurring", body.order, { field: "user", pubkey: body.user });
      if (body.recurringType !== undefined && body.recurringType !== record.recurringType)
        throw badRequest(
          "recurringType",
          "type_mismatch",
          `order ${body.order} is a ${record.recurringType ?? "time"} order`,
        );
      const request = pending.addRequest("recurring-cancel", () => body.order);
      const built = await chain.buildTriggerCancel({
        maker: new PublicKey(body.user),
        order: new PublicKey(body.order),
        kind: "recurring-cancel",
      });
      return { requestId: request.requestId, transaction: built.transaction };
    },

    getRecurringOrders({ params }: { params: Out<typeof s.recurringOrdersParams> }) {
      const all = ordersOf(
        world,
        "recurring",
        params.user,
        params.orderStatus,
        (o) => params.recurringType === "all" || (o.recurringType ?? "time") === params.recurringType,
      );
      const page = params.page ?? 1;
      const { items, totalPages } = pageOf(all, page);
      return {
        user: params.user,
        orderStatus: params.orderStatus,
        [params.recurringType]: items.map((o) => recurringOrderView(world, o)),
        page,
        totalPages,
      };
    },

    async executeRecurring({ body }: { body: Out<typeof s.executeBody> }) {
      const request = requireRequest(pending, body.requestId, ["recurring", "recurring-cancel"]);
      const result = await execute(chain, request, body.signedTransaction);
      // As the live service: `error: null` on success, and the created order's account.
      return result.ok
        ? {
            signature: result.signature,
            status: "Success" as const,
            order: request.kind === "recurring" ? request.ref : null,
            error: null,
          }
        : {
            signature: result.signature,
            status: "Failed" as const,
            order: null,
            error: result.error ?? "transaction failed",
          };
    },
  };
}
