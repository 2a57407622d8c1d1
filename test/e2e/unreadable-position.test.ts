import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

/**
 * One position the client cannot read (the sandbox breaks a field of the first item of every
 * positions page) costs that position, not the poll: the others are still claimed, and the skipped
 * one is counted.
 */
describe("an unreadable position in the list: skipped and counted, the rest of the poll runs", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let positions: Position[];

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-unreadable-position");
    wallet = sandbox.wallets[0] ?? "";
    positions = await positionsOf(sandbox, wallet);
    sandbox.faults.configure("listPositions", { schemaBreakRate: 1 });
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, { walletYaml: `wallets:\n  - pubkey: ${wallet}\n` }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    sandbox?.faults.clear();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("claims the winners it can read, and counts the one it cannot", async () => {
    const [broken, ...readable] = positions;
    const winners = readable.filter((p) => p.claimable && !p.claimed);
    expect(winners.length, "the sandbox seed gives wallet 0 a readable winner").toBeGreaterThan(0);
    const claims = await eventually(
      "the readable winners claimed",
      async () => {
        const rows = (await keeper.ledger.list()).filter(
          (r) => r.kind === "claim" && r.status === "confirmed",
        );
        return rows.length >= winners.length ? rows : undefined;
      },
      60_000,
    );
    expect(claims.map((r) => r.key).sort()).toEqual(winners.map((p) => `claim-${p.pubkey}`).sort());
    expect((await keeper.ledger.list()).some((r) => r.key.includes(broken?.pubkey ?? "-"))).toBe(false);
    const metrics = await keeper.metrics.render();
    expect(metrics).toMatch(/keeper_api_items_skipped_total\{endpoint="listPositions"\} [1-9]/);
  }, 120_000);
});
