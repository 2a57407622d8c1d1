import type { ApiClient } from "../../src/api/index.js";
import type { BuildApi } from "../../src/keeper/pipeline/build-transaction.js";

/**
 * The service calls every build makes, straight through the API client (as the worker role wires
 * them). Swaps and close-all need more (buildSwap, simulateUnits, closeAllPositions): tests add those.
 */
export function serviceBuildApi(client: ApiClient): BuildApi {
  return {
    claimPosition: client.prediction.claimPosition,
    closePosition: client.prediction.closePosition,
    createTriggerOrder: client.trigger.createOrder,
    cancelTriggerOrder: client.trigger.cancelOrder,
    createRecurringOrder: client.recurring.createOrder,
    cancelRecurringOrder: client.recurring.cancelOrder,
  };
}
