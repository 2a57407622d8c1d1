import { VersionedTransaction } from "@solana/web3.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { positionsOf } from "./keeper-harness.js";

/**
 * Opens a Forecast (bisonfi) position for sandbox wallet `walletIndex` on the first Forecast market,
 * through the service's execute endpoint (the service co-signs the atomic swap there).
 */
export async function openForecastPosition(sandbox: RunningSandbox, walletIndex: number): Promise<Position> {
  const owner = sandbox.world.walletKeypair(walletIndex);
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: { "x-api-key": sandbox.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path}: ${text}`);
    return JSON.parse(text) as { transaction: string; execution: { context: unknown }; status?: string };
  };
  const event = sandbox.world.events.find((e) => e.provider === "bisonfi");
  const market = sandbox.world.markets[event?.marketIndexes[0] ?? -1];
  if (market === undefined) throw new Error("the sandbox lists no Forecast market");
  const build = await call("POST", "/prediction/v1/orders", {
    ownerPubkey: owner.publicKey.toBase58(),
    marketId: market.marketId,
    isYes: true,
    isBuy: true,
    depositAmount: "50000000",
  });
  const tx = VersionedTransaction.deserialize(Buffer.from(build.transaction, "base64"));
  tx.sign([owner]);
  const answer = await call("POST", "/prediction/v1/execute", {
    signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
    context: build.execution.context,
  });
  if (answer.status !== "Success")
    throw new Error(`the Forecast buy did not execute: ${JSON.stringify(answer)}`);
  const position = (await positionsOf(sandbox, owner.publicKey.toBase58())).find(
    (p) => p.marketId === market.marketId,
  );
  if (position === undefined) throw new Error("the Forecast buy left no position");
  return position;
}
