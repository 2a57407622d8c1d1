import { createApiClient } from "../../../src/api/client.js";
import type { RateLimitPlan } from "../../../src/sandbox/http/rate-limit.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";

/**
 * The sandbox service on a rate-limit plan, no chain, with a market to ask for and the window emptied
 * of the probe that found it. `counts` is what the service counted for the key: the tests' verdict.
 */
export async function sandboxOnPlan(plan: RateLimitPlan, cleanups: Array<() => Promise<unknown>>) {
  const sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: plan });
  cleanups.push(() => sandbox.close());
  const probe = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const events = await probe.prediction.listEvents({ includeMarkets: true, end: 1 });
  const marketId = events.data[0]?.markets?.[0]?.marketId;
  if (marketId === undefined) throw new Error("the sandbox listed no market");
  sandbox.server.rateLimiter.reset();
  return { sandbox, marketId, counts: () => sandbox.server.rateLimiter.countsOf(sandbox.apiKey) };
}
