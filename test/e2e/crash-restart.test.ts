import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { LedgerRow } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  positionsOf,
  spawnKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
  writeWalletKeyFiles,
} from "../helpers/keeper-harness.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../helpers/ledger-queues.js";

describe("crash: the keeper is killed (SIGKILL) with claims in flight and restarted", () => {
  let sandbox: RunningSandbox;
  let redis: LedgerAndQueues;
  let keeperRuns: Array<ReturnType<typeof spawnKeeper>> = [];
  beforeAll(async () => {
    // Slots of 400 ms, as on mainnet: a blockhash lives about 60 s, longer than a kill and a restart
    // take on a busy machine, so a send that reached the chain lands before its blockhash runs out.
    ({ sandbox } = await startTestSandbox({ slotMs: 400 }));
    redis = await ledgerAndQueues("e2e-crash");
  });
  afterAll(async () => {
    await Promise.all(keeperRuns.map((run) => run.kill()));
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("ends with every claim made once: none doubled, none lost", async () => {
    const config = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: await writeWalletKeyFiles(sandbox),
    });
    const initial: Position[] = (
      await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))
    ).flat();
    const winners = initial.filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(1);
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, sandbox.usdcMint));

    // The chain holds every send until the test lands them, so claims are signed, recorded and sent
    // but not landed when we kill, whatever the machine's load.
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    chain.faults.landDelayMs = 10 * 60_000;

    const { ledger, attempts } = redis;
    const first = spawnKeeper(config);
    keeperRuns.push(first);
    // Attempts recorded as sent whose bytes the chain holds. A kill can also fall between recording a
    // signature and sending it: such an attempt never reached the chain, and the next process may
    // resume or rebuild it (the payout check below holds either way).
    const sentAndHeld = async (): Promise<Map<string, string>> => {
      const found = new Map<string, string>();
      for (const row of await ledger.list()) {
        const attempt = row.status === "sending" ? await attempts.get(row.key) : undefined;
        if (attempt?.status === "sent" && attempt.signature && chain.isHeld(attempt.signature))
          found.set(row.key, attempt.signature);
      }
      return found;
    };
    await eventually(
      "claims signed, recorded and sent",
      async () => ((await sentAndHeld()).size > 0 ? true : undefined),
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${first.output().slice(-3000)}`);
    });

    await first.kill("SIGKILL");
    const recorded = await sentAndHeld();
    expect(recorded.size).toBeGreaterThan(0);
    // What was sent before the kill lands now, while no keeper runs.
    chain.faults.landDelayMs = 0;
    chain.landHeldSends();

    const second = spawnKeeper(config);
    keeperRuns.push(second);
    const rows = await eventually(
      "every winning position claimed and confirmed after the restart",
      async () => {
        const all = await ledger.list();
        const confirmed = all.filter((r: LedgerRow) => r.kind === "claim" && r.status === "confirmed");
        return confirmed.length >= winners.length ? all : undefined;
      },
      90_000,
    ).catch(async (error: Error) => {
      const state = (await ledger.list()).map(
        (r) => `${r.key.slice(0, 16)} ${r.status} ${r.builds} ${r.error ?? ""}`,
      );
      const problems = second
        .output()
        .split("\n")
        .filter((l) => /"level":"(warn|error|fatal)"/.test(l))
        .slice(-10);
      throw new Error(`${error.message}\n${state.join("\n")}\n${problems.join("\n")}`);
    });

    const claims = rows.filter((r) => r.kind === "claim");
    expect(claims.map((r) => r.key).sort()).toEqual(winners.map((p) => `claim-${p.pubkey}`).sort());
    expect(claims.every((r) => r.status === "confirmed")).toBe(true);
    // The claims whose bytes reached the chain before the kill landed; the second process followed
    // their recorded signature and signed nothing new for them.
    for (const [key, signature] of recorded) {
      const attempt = await attempts.get(key);
      expect(attempt?.attempt).toBe(1);
      expect(attempt?.signature).toBe(signature);
    }
    // On chain: each owner received exactly the sum of its payouts, once.
    for (const wallet of sandbox.wallets) {
      const expected = claims
        .filter((r) => r.wallet === wallet)
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - (before.get(wallet) ?? 0n)).toBe(
        expected,
      );
    }

    // A graceful stop exits 0.
    expect(await second.kill("SIGTERM")).toBe(0);
    keeperRuns = [];
  }, 180_000);
});

describe("two keepers against the same Redis", () => {
  let sandbox: RunningSandbox;
  let redis: LedgerAndQueues;
  const runs: Array<ReturnType<typeof spawnKeeper>> = [];
  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await ledgerAndQueues("e2e-two");
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.kill()));
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("do the same work once", async () => {
    const config = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: await writeWalletKeyFiles(sandbox),
    });
    const initial = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    const winners = initial.filter((p) => p.claimable && !p.claimed);
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, sandbox.usdcMint));

    runs.push(spawnKeeper(config), spawnKeeper(config));
    const { ledger } = redis;
    await eventually(
      "every winning position claimed by one of the two keepers",
      async () => {
        const confirmed = (await ledger.list()).filter((r) => r.kind === "claim" && r.status === "confirmed");
        return confirmed.length >= winners.length ? true : undefined;
      },
      90_000,
    );
    // Let both keep polling a few more ticks: nothing more happens.
    const probe = new Redis(redis.redis.options);
    const ticks = await lastPollsOf(probe, redis.keys);
    await eventually("three more polls", async () => {
      const now = await lastPollsOf(probe, redis.keys);
      return sandbox.wallets.every((w) => Number(now[w]) >= Number(ticks[w]) + 3) ? true : undefined;
    });
    probe.disconnect();

    const claims = (await ledger.list()).filter((r) => r.kind === "claim");
    expect(claims).toHaveLength(winners.length);
    for (const wallet of sandbox.wallets) {
      const expected = claims
        .filter((r) => r.wallet === wallet)
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - (before.get(wallet) ?? 0n)).toBe(
        expected,
      );
    }
  }, 180_000);
});
