import { Transaction } from "@solana/web3.js";
import { type EndpointName, endpoints } from "../../../../src/api/endpoints.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { createWorldHandlers } from "../../../../src/sandbox/world/handlers.js";
import { createWorld, type World, type WorldOptions } from "../../../../src/sandbox/world/world.js";

/** The value, or a failed test when it is missing. */
export function defined<T>(value: T | undefined | null): T {
  if (value === undefined || value === null) throw new Error("expected a value");
  return value;
}

export const wallet = (world: World, index: number): string => world.walletPubkey(index);

/** A world on a driven clock with its handlers, and a caller that validates like the HTTP layer. */
export function worldFixture(options: WorldOptions = {}) {
  const clock = new DrivenClock();
  const world = createWorld({ clock, ...options });
  const wired = createWorldHandlers(world);
  // biome-ignore lint/suspicious/noExplicitAny: the body was just checked against the response schema; tests read it as JSON.
  async function call(name: EndpointName, params?: Record<string, unknown>, body?: unknown): Promise<any> {
    const def = endpoints[name] as {
      params?: import("zod").ZodType;
      body?: import("zod").ZodType;
      response: import("zod").ZodType;
    };
    const input = {
      params: def.params === undefined ? undefined : def.params.parse(params ?? {}),
      body: def.body === undefined ? undefined : def.body.parse(body),
    };
    const handler = wired.handlers[name] as (i: typeof input) => unknown;
    const result = await handler(input);
    // Every answer must satisfy the endpoint's response schema exactly.
    return def.response.parse(result);
  }
  /** Signs a built base64 transaction with wallet `index` and returns base64 again. */
  function sign(base64: string, walletIndex: number): string {
    const tx = Transaction.from(Buffer.from(base64, "base64"));
    tx.partialSign(world.walletKeypair(walletIndex));
    return tx.serialize({ requireAllSignatures: true }).toString("base64");
  }
  const walletOf = (index: number): string => world.walletPubkey(index);
  const mint = (key: string): string => defined(world.tokens.byKey(key)).mint;
  return { clock, world, call, sign, wallet: walletOf, mint, ...wired };
}
