import { VersionedTransaction } from "@solana/web3.js";
import type { RunningSandbox } from "../sandbox/index.js";

/** What the demo opens for a wallet at its start: a market, a side, and what it pays. */
export interface DemoOpen {
  readonly walletIndex: number;
  readonly marketId: string;
  readonly isYes: boolean;
  /** USDC micro-units offered (the service's minimum order is $5). */
  readonly depositAmount: string;
  /** An exact size, when the deposit should not be spent whole (the sandbox fills to 0.01 contract). */
  readonly contractsDecimal?: string;
}

interface OrderBuild {
  readonly transaction: string;
  readonly execution: { readonly context: unknown };
  readonly order: { readonly positionPubkey: string };
}

/**
 * Opens a position as any client of the service does: `POST /prediction/v1/orders`, the wallet's
 * signature, `POST /prediction/v1/execute` with the build's context (the service co-signs a Forecast
 * swap there). Returns the new position's public key once the service says it executed.
 */
export async function openThroughService(sandbox: RunningSandbox, open: DemoOpen): Promise<string> {
  const owner = sandbox.world.walletKeypair(open.walletIndex);
  const build = (await post(sandbox, "/prediction/v1/orders", {
    ownerPubkey: owner.publicKey.toBase58(),
    marketId: open.marketId,
    isYes: open.isYes,
    isBuy: true,
    depositAmount: open.depositAmount,
    ...(open.contractsDecimal === undefined ? {} : { contractsDecimal: open.contractsDecimal }),
  })) as OrderBuild;
  const tx = VersionedTransaction.deserialize(Buffer.from(build.transaction, "base64"));
  tx.sign([owner]);
  const answer = (await post(sandbox, "/prediction/v1/execute", {
    signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
    context: build.execution.context,
  })) as { status?: string; error?: string | null };
  if (answer.status !== "Success")
    throw new Error(`demo: the open on ${open.marketId} did not execute: ${answer.error ?? answer.status}`);
  return build.order.positionPubkey;
}

async function post(sandbox: RunningSandbox, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: "POST",
    headers: { "x-api-key": sandbox.apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`demo: POST ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as unknown;
}
