import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";
import { type RefusingNode, startRefusingNode } from "../helpers/refusing-rpc.js";

/**
 * `rpc.url` names a node that reads but refuses every send (congested); `rpc.sendUrls` names one that
 * accepts them. The whole keeper still claims every winner once: its sends reach the extra node.
 */
describe("a keeper whose main RPC refuses sends lands claims through rpc.sendUrls", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let refusing: RefusingNode;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    redis = await testRedis("e2e-send-urls");
    refusing = await startRefusingNode(sandbox.chain.url);
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await refusing?.close();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("claims every winning position once, each paid out on chain", async () => {
    const chainUrl = sandbox.chain?.url ?? "";
    const winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(0);
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, sandbox.usdcMint));

    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
    ({ keeper } = await startTestKeeper(
      { ...config, rpc: { ...config.rpc, url: refusing.url, sendUrls: [chainUrl] } },
      sandbox,
    ));

    const keys = winners.map((p) => `claim-${p.pubkey}`);
    const confirmed = await eventually(
      "every claim confirmed",
      async () => {
        const claims = (await keeper.ledger.list()).filter((r) => keys.includes(r.key));
        return claims.length === keys.length && claims.every((r) => r.status === "confirmed")
          ? claims
          : undefined;
      },
      120_000,
    );
    expect(refusing.refusedSends()).toBeGreaterThanOrEqual(keys.length);
    expect(confirmed.some((r) => BigInt(r.amountMicroUsd ?? "0") > 0n)).toBe(true);
    for (const wallet of sandbox.wallets) {
      const expected = confirmed
        .filter((r) => r.wallet === wallet)
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - (before.get(wallet) ?? 0n)).toBe(
        expected,
      );
    }
  }, 300_000);
});
