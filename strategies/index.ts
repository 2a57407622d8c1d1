import type { Strategy } from "../src/core/strategy.js";
import { autoClaim } from "./auto-claim.js";
import { dca } from "./dca.js";
import { exitRules } from "./exit-rules/index.js";
import { limitOrders } from "./limit-orders.js";
import { sweep } from "./sweep.js";

/** The built-in strategies by name. User strategies are loaded from files named in config. */
export const builtInStrategies: ReadonlyMap<string, Strategy<unknown>> = new Map<string, Strategy<unknown>>([
  [autoClaim.name, autoClaim as Strategy<unknown>],
  [exitRules.name, exitRules as Strategy<unknown>],
  [dca.name, dca as Strategy<unknown>],
  [limitOrders.name, limitOrders as Strategy<unknown>],
  [sweep.name, sweep as Strategy<unknown>],
]);

/** What runs when a config names no strategies (config/default.yaml says the same). */
export const defaultStrategyNames: readonly string[] = [autoClaim.name];
