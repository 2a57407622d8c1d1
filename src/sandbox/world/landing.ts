import type { LandedTransaction, WorldChainPort } from "./chain-port.js";
import { parseSandboxMemo } from "./chain-port.js";
import type { PendingActions } from "./pending-actions.js";
import { positionFigures } from "./views.js";
import type { World } from "./world.js";

/**
 * Applies a landed transaction to the world, by its memo `keeper-sandbox:<kind>:<ref>`. This is the
 * only way a build turns into an effect: a transaction that was built but never landed changes nothing.
 */
export function applyLanded(world: World, pending: PendingActions, landed: LandedTransaction): void {
  if (landed.err !== null && landed.err !== undefined) return;
  for (const memo of landed.memos) {
    const tag = parseSandboxMemo(memo);
    if (tag === undefined) continue;
    const at = { signature: landed.signature, slot: landed.slot };
    switch (tag.kind) {
      case "claim":
        world.applyClaim(tag.ref, at);
        break;
      case "service-claim":
        world.applyClaim(tag.ref, at, true);
        break;
      case "open": {
        const draft = pending.opens.get(tag.ref);
        if (draft !== undefined) world.applyOpen(draft, at);
        pending.opens.delete(tag.ref);
        break;
      }
      case "settle":
        world.applySettle(tag.ref, at);
        break;
      case "close": {
        const position = world.findPosition(tag.ref);
        const built = pending.closes.get(tag.ref);
        const figures =
          built ??
          (position === undefined
            ? undefined
            : { proceedsMicro: positionFigures(world, position).valueMicro, feeMicro: 0 });
        if (figures !== undefined) world.applyClose(tag.ref, { ...at, ...figures });
        pending.closes.delete(tag.ref);
        break;
      }
      case "trigger":
      case "recurring": {
        const draft = pending.orderDrafts.get(tag.ref);
        if (draft !== undefined) world.applyOrderCreated({ ...draft, signature: landed.signature });
        break;
      }
      case "trigger-cancel":
      case "recurring-cancel":
        world.applyOrderCancelled(tag.ref, landed.signature);
        break;
      default:
        break;
    }
  }
}

/** Subscribes the world to the chain; returns the unsubscribe function. */
export function attachLanding(world: World, pending: PendingActions, chain: WorldChainPort): () => void {
  return chain.onLanded((landed) => applyLanded(world, pending, landed));
}
