import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { KeeperConfig } from "../../src/config/load-config.js";
import type { Intent } from "../../src/core/intent.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  runCli,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { countLandedClaims } from "../helpers/landed.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../helpers/ledger-queues.js";

/**
 * A claim the signer's policy refuses stays refused, however often the wallet is polled and whatever
 * the policy says later, until a person runs `keeper retry`: then it is built afresh, checked, signed
 * and confirmed, and pays out once. Whole keeper, sandbox service, local chain, real Redis, real CLI.
 */
describe("keeper retry: a refused claim is admitted again by hand, end to end", () => {
  let sandbox: RunningSandbox;
  let redis: LedgerAndQueues;
  let configFile: string;
  let config: KeeperConfig;
  let keeper: RunningKeeper | undefined;
  let wallet: string;
  const webhook = Fastify();
  const notifications: Array<{ text: string; keeper: { event: string; intent?: string; reason?: string } }> =
    [];
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 1 }));
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    landedClaims = countLandedClaims(sandbox);
    redis = await ledgerAndQueues("e2e-retry");
    wallet = sandbox.wallets[0] ?? "";
    webhook.post("/hook", async (request) => {
      notifications.push(request.body as (typeof notifications)[number]);
      return { ok: true };
    });
    const hookFile = join(await mkdtemp(join(tmpdir(), "keeper-hook-")), "url");
    await writeFile(hookFile, `${await webhook.listen({ port: 0, host: "127.0.0.1" })}/hook`, {
      mode: 0o600,
    });
    configFile = await writeKeeperConfig(sandbox, redis.prefix, {
      extra: `notifications:\n  webhookUrlFile: ${hookFile}\n`,
    });
    config = await loadTestConfig(configFile);
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
    await webhook.close();
  });

  /** Waits until every wallet was polled twice more than now. */
  async function twoMorePolls(running: RunningKeeper) {
    const ticks = await lastPollsOf(running.redis, running.keys);
    await eventually("two more polls of the wallet", async () => {
      const now = await lastPollsOf(running.redis, running.keys);
      return Number(now[wallet]) >= Number(ticks[wallet]) + 2 ? true : undefined;
    });
  }

  it("tells of the refusal, leaves it alone, and confirms it once after keeper retry", async () => {
    const winners = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(0);
    const paidBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);

    // A policy that allows no priority fee at all: the service's claims (1,000 micro-lamports a unit)
    // are each refused.
    const strict = { ...config, signer: { ...config.signer, maxPriorityFeeLamports: 0 } };
    const first = await startTestKeeper(strict, sandbox);
    keeper = first.keeper;
    const refused = await eventually(
      "every claim refused",
      async () => {
        const rows = (await first.keeper.ledger.list()).filter((r) => r.kind === "claim");
        return rows.length === winners.length && rows.every((r) => r.status === "refused") ? rows : undefined;
      },
      60_000,
    );
    expect(refused.every((r) => r.reason === "priority_fee_too_high")).toBe(true);
    const key = refused[0]?.key ?? "";
    const position = key.replace(/^claim-/, "");

    // Told three ways: an error-level log line, a metric, a webhook message saying what to do.
    const logged = first.logs
      .records()
      .find((r) => r.level === 50 && r.intentKey === key && r.reason === "priority_fee_too_high");
    expect(logged).toMatchObject({ kind: "claim", wallet });
    expect(String(logged?.msg)).toContain(`keeper retry ${key}`);
    expect(await first.keeper.metrics.render()).toContain(
      `keeper_policy_refusals_total{kind="claim",reason="priority_fee_too_high"} ${winners.length}`,
    );
    const told = await eventually("a refused notification for the claim", async () =>
      notifications.find((n) => n.keeper.event === "refused" && n.keeper.intent === key),
    );
    expect(told.keeper.reason).toBe("priority_fee_too_high");
    expect(told.text).toContain("the position is still unclaimed");
    expect(told.text).toContain(`run \`keeper retry ${key}\``);

    // The policy is put right and the keeper restarted: still nothing happens by itself.
    await first.keeper.stop();
    keeper = undefined;
    const second = await startTestKeeper(config, sandbox);
    keeper = second.keeper;
    await twoMorePolls(second.keeper);
    expect(await second.keeper.ledger.get(key)).toMatchObject({ status: "refused", tries: 1 });
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(paidBefore);

    const run = await runCli(["retry", key, "--json"], { KEEPER_CONFIG: configFile });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      key,
      kind: "claim",
      // Read back after the admission: the running keeper may already be building or sending it.
      status: expect.stringMatching(/^(pending|building|built|sending|confirmed)$/),
      tries: 2,
      previous: { status: "refused", reason: "priority_fee_too_high", tries: 1 },
    });

    const running = second.keeper;
    const confirmed = await eventually(
      "the retried claim confirmed",
      async () => {
        const row = await running.ledger.get(key);
        return row?.status === "confirmed" ? row : undefined;
      },
      60_000,
    );
    expect(confirmed.tries).toBe(2);
    expect(BigInt(confirmed.amountMicroUsd ?? "0")).toBeGreaterThan(0n);
    // Paid once: the balance rose by this claim's payout only, and its payout landed once.
    await twoMorePolls(running);
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - paidBefore).toBe(
      BigInt(confirmed.amountMicroUsd ?? "0"),
    );
    expect(landedClaims.get(position)).toBe(1);
    expect([...landedClaims.keys()]).toEqual([position]);
    const others = (await running.ledger.list()).filter((r) => r.kind === "claim" && r.key !== key);
    expect(others.every((r) => r.status === "refused" && r.tries === 1)).toBe(true);

    // A confirmed intent cannot be retried: exit 2, nothing changed.
    const before = await running.ledger.get(key);
    const again = await runCli(["retry", key], { KEEPER_CONFIG: configFile });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${key} is confirmed; only a refused or failed intent can be retried`);
    expect(await running.ledger.get(key)).toEqual(before);
  }, 180_000);

  it("prints what it retried; refuses an unknown key, an intent in flight and a missing argument with exit code 2", async () => {
    const { ledger } = redis;
    const unknown = await runCli(["retry", "claim-nothing-here"], { KEEPER_CONFIG: configFile });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no intent claim-nothing-here in the ledger");
    expect(await ledger.get("claim-nothing-here")).toBeUndefined();

    // An intent of a wallet no keeper polls, admitted and waiting for its build.
    const stranger = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
    const intent: Intent = {
      kind: "claim",
      key: "claim-in-flight",
      wallet: stranger,
      strategy: "auto-claim",
      positionPubkey: stranger,
    };
    await ledger.admit(intent);
    const before = await ledger.get(intent.key);
    const inFlight = await runCli(["retry", intent.key, "--json"], { KEEPER_CONFIG: configFile });
    expect(inFlight.code).toBe(2);
    expect(inFlight.stdout).toBe("");
    expect(inFlight.stderr).toContain("claim-in-flight is pending; only a refused or failed intent");
    expect(await ledger.get(intent.key)).toEqual(before);

    // A refused one is admitted again, and the table output says what it was and what it is now.
    const refusedIntent: Intent = { ...intent, key: "claim-refused-by-hand" };
    await ledger.admit(refusedIntent);
    await ledger.update(refusedIntent.key, {
      status: "refused",
      reason: "outflow_sol",
      error: "simulation: the wallet loses 5 lamports",
    });
    const retried = await runCli(["retry", refusedIntent.key], { KEEPER_CONFIG: configFile });
    expect(retried.code, retried.stderr).toBe(0);
    // "now" is what the CLI read back: the running keeper may already have taken the intent up.
    expect(retried.stdout).toMatch(
      /^claim-refused-by-hand: was refused \(outflow_sol: simulation: the wallet loses 5 lamports\); now (pending|building|built|sending|failed), try 2/m,
    );
    // The running keeper takes it at once (and the service knows no such position): the try counts.
    expect((await ledger.get(refusedIntent.key))?.tries).toBe(2);

    const missing = await runCli(["retry"], { KEEPER_CONFIG: configFile });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument");
  }, 60_000);
});
