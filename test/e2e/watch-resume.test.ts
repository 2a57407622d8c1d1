import { readFile, writeFile } from "node:fs/promises";
import type { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Intent, intentKeys } from "../../src/core/intent.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { QUEUES } from "../../src/keeper/names.js";
import { enqueueBuild } from "../../src/keeper/queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../../src/keeper/queues/queues.js";
import type { Ledger, LedgerRow } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { AttemptRecord, RedisAttemptStore } from "../../src/signer/attempt-store.js";
import {
  eventually,
  positionsOf,
  spawnKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
  writeWalletKeyFiles,
} from "../helpers/keeper-harness.js";
import { countLandedClaims } from "../helpers/landed.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../helpers/ledger-queues.js";

/** The chain drops every send while this is set: a sent claim can only be watched. */
const DROP_EVERY_SEND = 1_000_000;

/**
 * The watch (the sign job's confirm loop) across a crash: a keeper process is killed (SIGKILL) while it watches a
 * sent claim the chain keeps dropping. The next process finishes that very transaction from the
 * attempt record, whether BullMQ hands it the stalled watch or housekeeping finds the watch gone.
 * Nothing is signed anew; each claim pays once.
 */
describe("the watcher resumes a sent transaction after the keeper is killed", () => {
  let sandbox: RunningSandbox;
  let redis: LedgerAndQueues;
  let ledger: Ledger;
  let attempts: RedisAttemptStore;
  let actions: Queue<ActionJobData>;
  let sign: Queue<SignJobData>;
  let configFile: string;
  let winners: Position[];
  const runs: Array<ReturnType<typeof spawnKeeper>> = [];
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    // 400 ms slots: a blockhash lives a minute, longer than a kill and a restart take.
    ({ sandbox } = await startTestSandbox({ slotMs: 400 }));
    landedClaims = countLandedClaims(sandbox);
    redis = await ledgerAndQueues("e2e-watch-resume");
    ({ ledger, attempts } = redis);
    actions = redis.queue(QUEUES.actions);
    sign = redis.queue(QUEUES.sign);
    configFile = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: await writeWalletKeyFiles(sandbox),
      extra: "strategies: []\n",
    });
    // Housekeeping every second, and an intent sending for 2 s counts as stuck.
    const text = (await readFile(configFile, "utf8"))
      .replace("schedules:\n", 'schedules:\n  housekeeping: "* * * * * *"\n')
      .replace("signer:\n", "signer:\n  stuckSendingSeconds: 2\n");
    await writeFile(configFile, text);
    winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(runs.map((run) => run.kill()));
    await sandbox?.close();
    await redis?.cleanup();
  });

  function start() {
    const run = spawnKeeper(configFile);
    runs.push(run);
    return run;
  }

  /** A winning position's claim, admitted and its first build queued, as a poll does. */
  async function admitClaim(position: Position): Promise<string> {
    const intent: Intent = {
      kind: "claim",
      key: intentKeys.claim(position.pubkey),
      wallet: position.ownerPubkey,
      strategy: "auto-claim",
      positionPubkey: position.pubkey,
    };
    const admitted = await ledger.admit(intent);
    expect(admitted).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(actions, intent.key, { tries: 1, recordId: admitted.recordId }, 1);
    return intent.key;
  }

  /** The claim signed, sent and dropped, and a watch of it running. */
  async function sentAndWatched(key: string, run: ReturnType<typeof spawnKeeper>): Promise<AttemptRecord> {
    return eventually(
      "the claim sent and watched",
      async () => {
        const record = await attempts.get(key);
        const watches = await sign.getJobs(["active"]);
        return record?.status === "sent" && watches.some((job) => job?.data.intentKey === key)
          ? record
          : undefined;
      },
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${run.output().slice(-3000)}`);
    });
  }

  async function confirmedRow(key: string, run: ReturnType<typeof spawnKeeper>): Promise<LedgerRow> {
    return eventually(
      "the claim confirmed after the restart",
      async () => {
        const row = await ledger.get(key);
        return row?.status === "confirmed" ? row : undefined;
      },
      90_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${run.output().slice(-3000)}`);
    });
  }

  /** Lines of a process's log with this message. */
  const logged = (run: ReturnType<typeof spawnKeeper>, msg: string) =>
    run
      .output()
      .split("\n")
      .filter((line) => line.includes(`"msg":"${msg}"`));

  it("killed mid-watch: the next process takes the stalled watch and lands the recorded transaction", async () => {
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    const position = winners[0] as Position;
    const before = await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint);
    chain.dropFirstSends(DROP_EVERY_SEND);
    const first = start();
    const key = await admitClaim(position);
    const recorded = await sentAndWatched(key, first);
    await first.kill("SIGKILL");
    chain.faults.reset();

    const second = start();
    const row = await confirmedRow(key, second);
    expect(row.signature).toBe(recorded.signature);
    expect(await attempts.get(key)).toMatchObject({
      status: "confirmed",
      attempt: 1,
      signature: recorded.signature,
    });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      before + BigInt(row.amountMicroUsd ?? "0"),
    );
    // The second process signed nothing: it watched the first one's recorded bytes.
    expect(logged(second, "transaction signed and recorded")).toEqual([]);
    expect(logged(second, "resuming a recorded transaction").length).toBeGreaterThan(0);
    expect(await second.kill("SIGTERM")).toBe(0);
  }, 240_000);

  it("killed mid-watch and the watch lost: housekeeping resumes the sending intent from its attempt record", async () => {
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    const position = winners[1] as Position;
    const before = await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint);
    chain.dropFirstSends(DROP_EVERY_SEND);
    const first = start();
    const key = await admitClaim(position);
    const recorded = await sentAndWatched(key, first);
    await first.kill("SIGKILL");
    // The watch is lost with the process: its job removed once its lock has lapsed.
    await eventually("the dead process's watch removed", async () => {
      for (const job of await sign.getJobs(["active", "waiting", "delayed"]))
        if (job?.data.intentKey === key) await job.remove();
      const left = await sign.getJobs(["active", "waiting", "delayed"]);
      return left.some((job) => job?.data.intentKey === key) ? undefined : true;
    });
    chain.faults.reset();

    const second = start();
    const row = await confirmedRow(key, second);
    expect(row.signature).toBe(recorded.signature);
    expect(await attempts.get(key)).toMatchObject({
      status: "confirmed",
      attempt: 1,
      signature: recorded.signature,
    });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      before + BigInt(row.amountMicroUsd ?? "0"),
    );
    expect(logged(second, "transaction signed and recorded")).toEqual([]);
    expect(logged(second, "an attempt of this intent is in flight").length).toBeGreaterThan(0);
    expect(await second.kill("SIGTERM")).toBe(0);
  }, 240_000);

  it("stopped (SIGTERM) mid-watch: exits 0 without waiting out the transaction; the next start lands it", async () => {
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    const position = winners[2] as Position;
    const before = await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint);
    chain.dropFirstSends(DROP_EVERY_SEND);
    const first = start();
    const key = await admitClaim(position);
    const recorded = await sentAndWatched(key, first);
    // The blockhash has most of its minute left: a stop that waited for the watch would not end yet.
    expect(await first.kill("SIGTERM")).toBe(0);
    expect(await attempts.get(key)).toMatchObject({ status: "sent", signature: recorded.signature });
    chain.faults.reset();

    const second = start();
    const row = await confirmedRow(key, second);
    expect(row.signature).toBe(recorded.signature);
    expect(await attempts.get(key)).toMatchObject({
      status: "confirmed",
      attempt: 1,
      signature: recorded.signature,
    });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      before + BigInt(row.amountMicroUsd ?? "0"),
    );
    expect(logged(second, "transaction signed and recorded")).toEqual([]);
    expect(await second.kill("SIGTERM")).toBe(0);
  }, 240_000);
});
