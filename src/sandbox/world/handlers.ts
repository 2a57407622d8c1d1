import { PublicKey } from "@solana/web3.js";
import type { z } from "zod";
import type { EndpointName, endpoints } from "../../api/endpoints.js";
import type { WorldChainPort } from "./chain-port.js";
import { contractsTimes } from "./contract-units.js";
import { attachLanding } from "./landing.js";
import type { MarketRecord } from "./markets.js";
import { OfflineChain } from "./offline-chain.js";
import { orderHandlers } from "./order-handlers.js";
import { PendingActions } from "./pending-actions.js";
import { predictionHandlers } from "./prediction-handlers.js";
import { type ServiceBehaviour, tradeHandlers } from "./trade-handlers.js";
import type { World } from "./world.js";

type Def<N extends EndpointName> = (typeof endpoints)[N];
type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a handler receives: path and query parameters parsed together, and the parsed JSON body. */
export interface WorldHandlerInput<N extends EndpointName> {
  readonly params: Def<N> extends { params: infer P } ? Output<P> : undefined;
  readonly body: Def<N> extends { body: infer B } ? Output<B> : undefined;
}

/** One handler per endpoint of the table; the HTTP layer validates input before calling them. */
export type WorldHandlers = {
  readonly [N in EndpointName]: (input: WorldHandlerInput<N>) => unknown;
};

export interface HandlersWithState {
  readonly handlers: WorldHandlers;
  /** The chain the handlers build for (the offline stand-in when none was given). */
  readonly chain: WorldChainPort;
  readonly pending: PendingActions;
  /** Stops applying landed transactions to the world. */
  readonly detach: () => void;
}

/**
 * Wires the world to its endpoints and subscribes it to the chain, so transactions built here change
 * the world when, and only when, they land.
 */
export function createWorldHandlers(
  world: World,
  chain?: WorldChainPort,
  behaviour?: ServiceBehaviour,
): HandlersWithState {
  const port = chain ?? new OfflineChain(world.seed, world.clock, world.genesisSeconds);
  const pending = new PendingActions(world.seed);
  const detachLanding = attachLanding(world, pending, port);
  // A fill the service makes by itself is settled on the chain by the service.
  const detachFills = world.onOrderFilled((order, outAmountRaw) => {
    void port.fillOrder({
      order: order.order,
      maker: new PublicKey(order.maker),
      outputMint: new PublicKey(order.outputMint),
      outAmountRaw,
    });
  });
  // Forecast settles by itself: a resolved market's winners are paid, no claim asked for. At once
  // when a test resolves a market, and for markets resolved by their schedule when positions are read.
  const settle = forecastSettlement(world, port);
  const detachSettle = world.onResolved(settle);
  const detach = () => {
    detachLanding();
    detachFills();
    detachSettle();
  };
  const prediction = predictionHandlers(world, port, pending);
  const handlers: WorldHandlers = {
    ...prediction,
    listPositions: (input) => {
      settle();
      return prediction.listPositions(input);
    },
    ...orderHandlers(world, port, pending),
    ...tradeHandlers(world, port, pending, behaviour),
  };
  return { handlers, chain: port, pending, detach };
}

/** The endpoint handlers alone, as the HTTP layer takes them. */
export function createHandlers(
  world: World,
  chain?: WorldChainPort,
  behaviour?: ServiceBehaviour,
): WorldHandlers {
  return createWorldHandlers(world, chain, behaviour).handlers;
}

/**
 * Pays every winner of a resolved Forecast market that is not paid yet (once: a payout in flight is
 * not sent again). The world calls it with the market a test resolved; reads call it without one.
 */
function forecastSettlement(world: World, port: WorldChainPort): (market?: MarketRecord) => void {
  const inFlight = new Set<number>();
  return (market) => {
    // Forecast markets hold no generated positions: only those opened since genesis.
    for (const position of world.openedPositions()) {
      const of = world.marketOf(position);
      if (of.forecast === undefined || (market !== undefined && of !== market)) continue;
      if (position.closedAt !== undefined || position.claimedAt !== undefined || inFlight.has(position.index))
        continue;
      if (!world.isWinning(position) || !world.isSettled(of)) continue;
      inFlight.add(position.index);
      void port
        .settleForecast({
          owner: new PublicKey(world.ownerOf(position)),
          positionPubkey: new PublicKey(world.positionPubkey(position)),
          payoutRaw: BigInt(contractsTimes(position.contracts, 1_000_000)),
        })
        .finally(() => inFlight.delete(position.index));
    }
  };
}
