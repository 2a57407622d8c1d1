import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { KeeperConfig } from "../../src/config/load-config.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { replay } from "../../src/keeper/replay/engine.js";
import { readRecording } from "../../src/keeper/replay/read-recording.js";
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
import { findNeedles, keyNeedles } from "../helpers/secret-scan.js";
import { TEST_API_KEY } from "../helpers/test-secrets.js";

const ONE_USD = 1_000_000;

/**
 * Replay against the live keeper, on the sandbox: a keeper with `record.dir` sells one position by a
 * take-profit (its bid raised 35 % over what was paid); the replay of what it recorded, with the same
 * config, sells the same position at the same poll, at the same bid, for the same proceeds that
 * landed on the chain.
 */
describe("replay of a live keeper's recording: the same exit, at the same time, bid and value", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let recordDir: string;
  let wallet: string;
  let target: Position;

  async function polls(count: number) {
    const live = keeper as RunningKeeper;
    const before = Number((await live.redis.zscore(live.keys.lastPolls, wallet)) ?? 0);
    await eventually(`${count} more polls`, async () =>
      Number((await live.redis.zscore(live.keys.lastPolls, wallet)) ?? 0) >= before + count
        ? true
        : undefined,
    );
  }

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-replay-live");
    recordDir = join(await mkdtemp(join(tmpdir(), "keeper-record-")), "recording");
    wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter(
      (p) =>
        p.marketMetadata.status === "open" &&
        !p.claimable &&
        !p.claimed &&
        p.openOrders === 0 &&
        Math.round(Number(p.avgPriceUsd) * 1.35) < 980_000 &&
        // Worth well over the $5 smallest order at the price paid.
        Number(p.contractsMicro ?? 0) * Number(p.avgPriceUsd) > 10 * ONE_USD * ONE_USD,
    );
    const first = open[0];
    if (!first) throw new Error("the sandbox seed no longer gives wallet 0 a free cheap position");
    target = first;
    sandbox.world.setPrice(
      target.marketId,
      target.isYes ? Number(target.avgPriceUsd) : ONE_USD - Number(target.avgPriceUsd),
      {
        halfSpreadMicro: 5_000,
      },
    );
    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      extra: `record:
  dir: ${recordDir}
strategies:
  - name: exit-rules
    overrides:
      - match: { marketId: "${target.marketId}", side: ${target.isYes ? "yes" : "no"} }
        rules: { takeProfitPct: 20 }
`,
    });
    config = await loadTestConfig(file);
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("sells live and in the replay at the same poll, bid and proceeds", async () => {
    const live = keeper as RunningKeeper;
    await polls(2);
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    const risen = Math.round(Number(target.avgPriceUsd) * 1.35);
    sandbox.world.setPrice(target.marketId, target.isYes ? risen : ONE_USD - risen, {
      halfSpreadMicro: 5_000,
    });
    const bidNow = (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === target.pubkey)?.sellPriceUsd;
    const row = await eventually(
      "the close confirmed",
      async () => (await live.ledger.list()).find((r) => r.status === "confirmed"),
      60_000,
    );
    expect(row).toMatchObject({ key: `close-${target.pubkey}`, strategy: "exit-rules" });
    const landed = (await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before;
    await polls(1);
    // Stopping flushes the recording: every poll's line is on disk.
    await live.stop();
    keeper = undefined;

    const recording = await readRecording(recordDir);
    const result = replay({
      polls: recording,
      strategies: config.strategies,
      logger: pino({ level: "silent" }),
    });
    expect(result.exits).toHaveLength(1);
    const [exit] = result.exits;
    expect(exit).toMatchObject({
      position: target.pubkey,
      rule: "take-profit",
      wallet,
      strategy: "exit-rules",
    });
    expect(exit?.reason).toBe(row.reason);
    // The same poll: the ledger stamps the admission a moment after the snapshot's second.
    expect(row.createdAt - (exit?.at ?? 0)).toBeGreaterThanOrEqual(0);
    expect(row.createdAt - (exit?.at ?? 0)).toBeLessThanOrEqual(1);
    // The bid the sandbox quoted when the live close sold, and the proceeds that landed.
    expect(exit?.bid).toBe(BigInt(bidNow ?? "x"));
    expect(exit?.net).toBe(BigInt(row.amountMicroUsd ?? "x"));
    expect(exit?.net).toBe(landed);
    const sold = sandbox.world.positions.find((p) => sandbox.world.positionPubkey(p) === target.pubkey);
    expect(BigInt(sold?.closedProceedsMicro ?? -1)).toBe(exit?.net);
    // Polls before the rise saw the position and asked nothing: the replay fired at the first poll after it.
    const seen = recording.filter(({ line }) => line.positions.some((p) => p.pubkey === target.pubkey));
    expect(seen[0]?.line.at).toBeLessThan(exit?.at ?? 0);
  }, 120_000);

  it("records no secret: not the API key, not the wallet's key", async () => {
    const files = await readdir(recordDir);
    expect(files.every((name) => /^\d{4}-\d{2}-\d{2}\.jsonl\.gz$/.test(name))).toBe(true);
    const text = (
      await Promise.all(
        files.map(async (name) => gunzipSync(await readFile(join(recordDir, name))).toString()),
      )
    ).join("");
    expect(text).toContain(wallet);
    const needles = [
      TEST_API_KEY,
      ...keyNeedles("wallet 0", sandbox.world.walletKeypair(0).secretKey).map((n) => n.value),
    ];
    expect([...findNeedles(text, needles)]).toEqual([]);
  });
});
