import { Connection } from "@solana/web3.js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../../../src/app/start-keeper.js";
import { type Intent, intentKeys } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { processConfirm } from "../../../../src/keeper/pipeline/confirm-loop.js";
import { enqueueBuild } from "../../../../src/keeper/queues/enqueue.js";
import type { LedgerRow } from "../../../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { RedisAttemptStore } from "../../../../src/signer/attempt-store.js";
import { type DroppingNode, startDroppingNode } from "../../../helpers/dropping-rpc.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../../../helpers/keeper-harness.js";
import { countLandedClaims } from "../../../helpers/landed.js";
import { testRedis } from "../../../helpers/redis.js";

/** Signing slots of the keeper under test; one more lost transaction than that is sent. */
const SIGNER_CONCURRENCY = 2;
const LOST = SIGNER_CONCURRENCY + 1;

/**
 * The whole keeper (worker and signer roles, no strategy: the test admits the claims as a poll would)
 * against the sandbox service and its local chain, reached through a node that loses transactions.
 * A lost transaction is watched by its sign job after its signing slot was freed: it cannot stop the
 * signer from signing the next claim, and it ends expired, rebuilt and confirmed.
 */
describe("the watcher: dropped transactions do not hold the signing slots", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let drops: DroppingNode;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let winners: Position[];
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    // 400 ms slots: a blockhash lives a minute, far longer than the new claim takes on a busy machine;
    // the lost ones are expired on purpose, by moving the chain on.
    ({ sandbox } = await startTestSandbox({ slotMs: 400 }));
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    landedClaims = countLandedClaims(sandbox);
    drops = await startDroppingNode(sandbox.chain.url);
    redis = await testRedis("watcher");
    const loaded = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, { extra: "strategies: []\n" }),
    );
    const config = {
      ...loaded,
      rpc: { ...loaded.rpc, url: drops.url },
      signer: { ...loaded.signer, concurrency: SIGNER_CONCURRENCY },
    };
    ({ keeper } = await startTestKeeper(config, sandbox, ["worker", "signer"]));
    winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThanOrEqual(LOST + 1);
  }, 60_000);

  afterAll(async () => {
    drops.dropNew = false;
    await keeper?.stop();
    await drops?.close();
    await sandbox?.close();
    await redis?.cleanup();
  });

  /** A winning position's claim, admitted to the ledger and its first build queued, as a poll does. */
  async function admitClaim(position: Position): Promise<string> {
    const intent: Intent = {
      kind: "claim",
      key: intentKeys.claim(position.pubkey),
      wallet: position.ownerPubkey,
      strategy: "auto-claim",
      positionPubkey: position.pubkey,
    };
    const admitted = await keeper.ledger.admit(intent);
    expect(admitted).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(keeper.queues.actions, intent.key, { tries: 1, recordId: admitted.recordId }, 1);
    return intent.key;
  }

  const usdcOf = (owner: string) => usdcBalance(sandbox, owner, sandbox.usdcMint);

  it("signs and confirms a new claim while more sent transactions than signing slots are lost; the lost ones end expired, rebuilt and confirmed", async () => {
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    const attempts = new RedisAttemptStore(redis.redis, keeper.keys.attemptsPrefix);
    const lostPositions = winners.slice(0, LOST);
    const fresh = winners[LOST] as Position;
    const paidBefore = new Map<string, bigint>();
    for (const p of [...lostPositions, fresh]) paidBefore.set(p.ownerPubkey, await usdcOf(p.ownerPubkey));

    // More transactions than signing slots are sent, and every one of them is lost on the way.
    drops.dropNew = true;
    const lostKeys: string[] = [];
    for (const position of lostPositions) lostKeys.push(await admitClaim(position));
    const sent = await eventually(
      `all ${LOST} claims signed, sent and lost, with ${SIGNER_CONCURRENCY} signing slots`,
      async () => {
        const records = await Promise.all(lostKeys.map((key) => attempts.get(key)));
        if (!records.every((r) => r?.status === "sent" && drops.lost().has(r.signature ?? "")))
          return undefined;
        return records.map((r) => ({ attempt: r?.attempt, signature: r?.signature ?? "" }));
      },
      45_000,
    );
    expect(sent.map((s) => s.attempt)).toEqual(lostKeys.map(() => 1));

    // The network heals for new transactions; the lost ones stay lost (they can only expire).
    drops.dropNew = false;
    const freshKey = await admitClaim(fresh);
    const confirmed = await eventually(
      "the new claim confirmed",
      async () => {
        const row = await keeper.ledger.get(freshKey);
        return row?.status === "confirmed" ? row : undefined;
      },
      45_000,
    );
    const freshPayout = BigInt(confirmed.amountMicroUsd ?? "0");
    expect(freshPayout).toBeGreaterThan(0n);
    expect(landedClaims.get(fresh.pubkey)).toBe(1);
    // ...while every lost one is still in flight: its first transaction watched, not yet expired.
    for (const [i, key] of lostKeys.entries()) {
      expect(await attempts.get(key)).toMatchObject({
        status: "sent",
        attempt: 1,
        signature: sent[i]?.signature,
      });
      expect((await keeper.ledger.get(key))?.status).toBe("sending");
    }
    // A watch per lost transaction runs in its sign job, outside the signing slots: more of them than
    // slots, and the new claim was signed meanwhile.
    expect(await keeper.queues.sign.getActiveCount()).toBeGreaterThanOrEqual(LOST);
    expect(await keeper.queues.confirm.getActiveCount()).toBe(0);
    const watched = (await keeper.metrics.attemptsWatched.get()).values[0]?.value;
    expect(watched).toBeGreaterThanOrEqual(LOST);

    // The lost transactions' blockhashes pass: each is found expired, rebuilt and lands once.
    chain.advanceSlots(200);
    const rows = await eventually(
      "every lost claim rebuilt and confirmed",
      async () => {
        const all = await Promise.all(lostKeys.map((key) => keeper.ledger.get(key)));
        return all.every((r) => r?.status === "confirmed") ? (all as LedgerRow[]) : undefined;
      },
      60_000,
    );
    const connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
    const expected = new Map(paidBefore);
    expected.set(fresh.ownerPubkey, (expected.get(fresh.ownerPubkey) ?? 0n) + freshPayout);
    for (const [i, row] of rows.entries()) {
      const position = lostPositions[i] as Position;
      expect(row.builds).toBeGreaterThanOrEqual(2);
      expect(row.signature).not.toBe(sent[i]?.signature);
      expect((await attempts.get(row.key))?.attempt).toBeGreaterThanOrEqual(2);
      // The lost transaction never landed; the rebuilt one did, once.
      const lostStatus = await connection.getSignatureStatuses([sent[i]?.signature ?? ""], {
        searchTransactionHistory: true,
      });
      expect(lostStatus.value[0]).toBeNull();
      expect(landedClaims.get(position.pubkey)).toBe(1);
      const payout = BigInt(row.amountMicroUsd ?? "0");
      expect(payout).toBeGreaterThan(0n);
      expected.set(position.ownerPubkey, (expected.get(position.ownerPubkey) ?? 0n) + payout);
    }
    for (const [owner, balance] of expected) expect(await usdcOf(owner)).toBe(balance);
  }, 180_000);

  it("a confirm job (queued by an earlier version) delivered again after its intent ended, or for an older build, watches nothing and changes nothing", async () => {
    const position = "Stake11111111111111111111111111111111111111";
    const intent: Intent = {
      kind: "claim",
      key: intentKeys.claim(position),
      wallet: sandbox.wallets[0] ?? "",
      strategy: "auto-claim",
      positionPubkey: position,
    };
    expect((await keeper.ledger.admit(intent)).admitted).toBe(true);
    const watched: string[] = [];
    const deps = {
      ledger: keeper.ledger,
      actions: keeper.queues.actions,
      maxRebuilds: 1,
      logger: pino({ level: "silent" }),
      watch: async (key: string) => {
        watched.push(key);
        return { outcome: "failed" as const, error: "must not be watched" };
      },
    };
    await keeper.ledger.update(intent.key, { status: "sending", builds: 2 });
    expect(
      await processConfirm({ id: "older-build", data: { intentKey: intent.key, build: 1 } }, deps),
    ).toBeUndefined();
    await keeper.ledger.update(intent.key, { status: "confirmed", signature: "landed" });
    expect(
      await processConfirm({ id: "after-the-end", data: { intentKey: intent.key, build: 2 } }, deps),
    ).toBeUndefined();
    expect(watched).toEqual([]);
    expect(await keeper.ledger.get(intent.key)).toMatchObject({
      status: "confirmed",
      signature: "landed",
      builds: 2,
    });
  });
});
