import { PublicKey } from "@solana/web3.js";
import type { z } from "zod";
import { MICRO_PER_CONTRACT } from "../../core/contracts.js";
import type * as s from "../../core/schemas/index.js";
import type { WorldChainPort } from "./chain-port.js";
import { contractFields, contractsTimes, floorToHundredth } from "./contract-units.js";
import { badRequest } from "./errors.js";
import { executeSigned, executionFieldsFor } from "./execution.js";
import type { MarketRecord } from "./markets.js";
import type { PendingActions } from "./pending-actions.js";
import type { PositionRecord } from "./positions.js";
import { requireMarket } from "./prediction-handlers.js";
import { derivePubkey, hexTag } from "./rng.js";
import { marketIdHash } from "./views.js";
import type { World } from "./world.js";

type Out<S extends z.ZodType> = z.output<S>;

/** The smallest order on every market and the largest on Forecast, in micro-USD (api-live). */
export const MIN_ORDER_MICRO = 5_000_000;
export const MAX_FORECAST_ORDER_MICRO = 250_000_000;
/** The buy fee, in basis points of the cost. */
const BUY_FEE_BPS = 100;

/** Whole contracts of the count the body gave (any one of its three forms), or undefined. */
function requestedContracts(body: Out<typeof s.createOrderBody>): number | undefined {
  let micro: bigint | undefined;
  if (body.contracts !== undefined) micro = BigInt(body.contracts) * MICRO_PER_CONTRACT;
  if (body.contractsMicro !== undefined) micro = BigInt(body.contractsMicro);
  if (body.contractsDecimal !== undefined) {
    const [whole = "0", fraction = ""] = body.contractsDecimal.split(".");
    micro = BigInt(whole) * MICRO_PER_CONTRACT + BigInt(fraction.padEnd(6, "0").slice(0, 6));
  }
  if (micro === undefined) return undefined;
  // Fills are floored to 0.01 contract (api-live).
  return floorToHundredth(Number(micro) / Number(MICRO_PER_CONTRACT));
}

/** The order's checks (side, mint, size, price), then the position it would open. */
function plannedBuy(
  world: World,
  chain: WorldChainPort,
  body: Out<typeof s.createOrderBody>,
): { market: MarketRecord; priceMicro: number; contracts: number; costMicro: number; feeMicro: number } {
  if (!body.isBuy)
    throw badRequest("isBuy", "sell_not_supported", "sell with DELETE /positions/{positionPubkey}");
  if (body.depositMint !== undefined && body.depositMint !== chain.usdcMint)
    throw badRequest("depositMint", "unsupported_mint", `must be USDC (${chain.usdcMint}) on the sandbox`);
  const market = requireMarket(world, body.marketId);
  if (world.marketState(market).status !== "open")
    throw badRequest("marketId", "market_not_open", "the market is not open for trading");
  const deposit = Number(body.depositAmount);
  if (deposit < MIN_ORDER_MICRO) throw badRequest("depositAmount", "order_too_small", "must be at least $5");
  if (market.forecast !== undefined && deposit > MAX_FORECAST_ORDER_MICRO)
    throw badRequest("depositAmount", "order_too_large", "must be at most $250 on a Forecast market");
  const pricing = world.pricing(market);
  const priceMicro = body.isYes ? pricing.buyYesPriceUsd : pricing.buyNoPriceUsd;
  if (body.maxBuyPriceUsd !== undefined && priceMicro > Number(body.maxBuyPriceUsd))
    throw badRequest("maxBuyPriceUsd", "price_above_limit", `the buy price is ${priceMicro} micro-USD`);
  const contracts = requestedContracts(body) ?? floorToHundredth(deposit / priceMicro);
  const costMicro = contractsTimes(contracts, priceMicro);
  if (contracts < 0.01 || costMicro > deposit)
    throw badRequest(
      "depositAmount",
      "insufficient_deposit",
      `does not pay for the contracts at ${priceMicro}`,
    );
  return {
    market,
    priceMicro,
    contracts,
    costMicro,
    feeMicro: Math.floor((costMicro * BUY_FEE_BPS) / 10_000),
  };
}

/** POST /orders and the two execute forms: a buy is built here and exists once it lands. */
export function orderHandlers(world: World, chain: WorldChainPort, pending: PendingActions) {
  return {
    async createOrder({ body }: { body: Out<typeof s.createOrderBody> }) {
      const owner = world.walletIndexOf(body.ownerPubkey);
      if (owner === undefined)
        throw badRequest("ownerPubkey", "unknown_wallet", "is not a wallet of this sandbox");
      const buy = plannedBuy(world, chain, body);
      const held = world
        .positionsOfWallet(owner)
        .find(
          (p) => p.marketIndex === buy.market.index && p.isYes === body.isYes && p.closedAt === undefined,
        );
      if (held !== undefined && held.claimedAt === undefined)
        throw badRequest("marketId", "position_exists", "the sandbox holds one position per market and side");
      const index = world.reservePositionIndex();
      const draft: PositionRecord = {
        index,
        ownerIndex: owner,
        marketIndex: buy.market.index,
        isYes: body.isYes,
        contracts: buy.contracts,
        avgPriceMicro: buy.priceMicro,
        feesMicro: buy.feeMicro,
        openedAt: world.now(),
        bump: 254,
        extraOrder: null,
      };
      const positionPubkey = world.positionPubkey(draft);
      const built = await chain.buildOpen({
        owner: new PublicKey(body.ownerPubkey),
        positionPubkey: new PublicKey(positionPubkey),
        costRaw: BigInt(buy.costMicro + buy.feeMicro),
        serviceSigns: buy.market.forecast !== undefined,
      });
      pending.opens.set(positionPubkey, draft);
      const externalOrderId = `buy-${hexTag(`${positionPubkey}:${index}`, 16)}`;
      const orderPubkey = derivePubkey(`buy-order:${positionPubkey}`, world.seed).toBase58();
      return {
        transaction: built.transaction,
        txMeta: { ...built.txMeta },
        externalOrderId,
        order: {
          orderPubkey,
          orderAtaPubkey: derivePubkey(`buy-order-ata:${orderPubkey}`, world.seed).toBase58(),
          userPubkey: body.ownerPubkey,
          marketId: buy.market.marketId,
          marketIdHash: marketIdHash(buy.market.marketId),
          positionPubkey,
          ...contractFields(buy.contracts),
          newContracts: contractFields(buy.contracts).contracts,
          newContractsMicro: contractFields(buy.contracts).contractsMicro,
          maxBuyPriceUsd: body.maxBuyPriceUsd ?? String(buy.priceMicro),
          minSellPriceUsd: null,
          externalOrderId,
          orderCostUsd: String(buy.costMicro),
          newAvgPriceUsd: String(buy.priceMicro),
          newSizeUsd: String(buy.costMicro),
          newPayoutUsd: String(contractsTimes(buy.contracts, 1_000_000)),
          estimatedProtocolFeeUsd: String(buy.feeMicro),
          estimatedVenueFeeUsd: "0",
          estimatedTotalFeeUsd: String(buy.feeMicro),
          isBuy: true,
          isYes: body.isYes,
        },
        ...executionFieldsFor(chain, pending, buy.market, body.ownerPubkey, built.transaction),
      };
    },

    async executePrediction({ body }: { body: Out<typeof s.predictionExecuteBody> }) {
      const outcome = await executeSigned(chain, pending, body.signedTransaction, body.context);
      return {
        status: outcome.error === null ? "Success" : "Failed",
        signature: outcome.signature,
        error: outcome.error,
        ...(body.requestId === undefined ? {} : { requestId: body.requestId }),
      };
    },

    /** The service's own client's form: the signature, or a 400 saying why it did not land. */
    async executeOrder({ body }: { body: Out<typeof s.orderExecuteBody> }) {
      const outcome = await executeSigned(chain, pending, body.signedTransaction, undefined);
      if (outcome.signature === null)
        throw badRequest("signedTransaction", "execution_failed", `did not execute: ${outcome.error}`);
      return { signature: outcome.signature };
    },
  };
}
