import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { defineStrategy, type Strategy } from "../../../../src/core/strategy.js";
import type { IndexClaim } from "../../../../src/core/strategy-hooks.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { type IndexClaimOutcome, IndexClaims } from "../../../../src/keeper/pipeline/index-claims.js";
import type { ActionJobData } from "../../../../src/keeper/queues/queues.js";
import { holdingsOf } from "../../../../src/keeper/state/holdings.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { OTHER_WALLET, position, RESOLVED_MARKET, WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const resolved = RESOLVED_MARKET;
const POS_A = "PosA111111111111111111111111111111111111111";
const POS_B = "PosB111111111111111111111111111111111111111";
const winner = (pos: string, contractsMicro: string | null = "5000000") =>
  testHolding({
    wallet: WALLET,
    marketId: "mkt-1",
    eventId: "evt-1",
    position: pos,
    ...(contractsMicro ? { contractsMicro } : {}),
  });

function configured(strategy: Strategy<unknown>, config: unknown = {}): ConfiguredStrategy {
  return { name: strategy.name, strategy, config };
}

/** A strategy whose hook answers what the test says. */
function hooked(answer: (pos: string) => IndexClaim | undefined): ConfiguredStrategy {
  return configured(
    defineStrategy({
      name: "hooked",
      contractVersion: 1,
      description: "test",
      configSchema: autoClaim.configSchema,
      evaluate: ({ state }) => ({ intents: [], state }),
      claimFromIndex: ({ entry }) => answer(entry.position),
    }) as Strategy<unknown>,
  );
}

describe("claims from the index: admitted under the poll's key, built, or left to a poll", () => {
  let env: LedgerAndQueues;
  let outcomes: IndexClaimOutcome[];
  let errors: string[];

  beforeEach(async () => {
    env = await ledgerAndQueues("index-claims");
    outcomes = [];
    errors = [];
  });
  afterEach(async () => env.cleanup());

  const claimsWith = (strategies: ConfiguredStrategy[], mode: "live" | "dry-run" = "live") =>
    new IndexClaims({
      mode,
      strategies,
      ledger: env.ledger,
      actions: env.queue<ActionJobData>(QUEUES.actions),
      logger: pino({ level: "silent" }),
      claimCost: { microUsd: async () => "2000" },
      events: {
        onOutcome: (o) => outcomes.push(o),
        onStrategyError: (s) => errors.push(s),
      },
    });
  const buildJobs = async () =>
    (await env.queue<ActionJobData>(QUEUES.actions).getJobs(["prioritized", "waiting"])).map(
      (j) => j.data.intentKey,
    );

  it("claims each winner once: a build queued per claim, the same winner seen again adds nothing", async () => {
    const claims = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))]);
    expect(await claims.claim(resolved, [winner(POS_A), winner(POS_B)], Date.now())).toBe(true);
    expect((await buildJobs()).sort()).toEqual([`claim-${POS_A}`, `claim-${POS_B}`]);
    expect((await env.ledger.get(`claim-${POS_A}`))?.status).toBe("pending");
    // A later cycle (or a sweep's poll) asks again: the ledger's key refuses it.
    expect(await claims.claim(resolved, [winner(POS_A)], Date.now())).toBe(true);
    expect(await buildJobs()).toHaveLength(2);
    expect(outcomes).toEqual(["claimed", "claimed", "not_admitted"]);
  });

  it("records a small payout as left to the service, builds nothing; dry-run builds nothing either", async () => {
    const claims = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))]);
    expect(await claims.claim(resolved, [winner(POS_A, "100000")], Date.now())).toBe(true);
    const left = await env.ledger.get(`claim-${POS_A}-left`);
    expect(left).toMatchObject({ status: "left_to_service", amountMicroUsd: "100000" });
    const dry = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))], "dry-run");
    expect(await dry.claim(resolved, [winner(POS_B)], Date.now())).toBe(true);
    expect((await env.ledger.get(`claim-${POS_B}`))?.status).toBe("dry-run");
    expect(await buildJobs()).toEqual([]);
  });

  it("leaves the wallet to a poll without the hook, or when an entry lacks what the hook needs", async () => {
    expect(await claimsWith([]).claim(resolved, [winner(POS_A)], Date.now())).toBe(false);
    const claims = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))]);
    // POS_B's entry has no exact count: nothing of the wallet is admitted, its poll decides it all.
    expect(await claims.claim(resolved, [winner(POS_A), winner(POS_B, null)], Date.now())).toBe(false);
    expect(await env.ledger.get(`claim-${POS_A}`)).toBeUndefined();
    expect(outcomes).toEqual(["polled"]);
  });

  it("refuses a hook's intent for another position or of another kind: a strategy error, and a poll", async () => {
    const other = hooked(() => ({
      intent: {
        kind: "claim",
        key: `claim-${POS_B}`,
        wallet: WALLET,
        strategy: "hooked",
        positionPubkey: POS_B,
      },
    }));
    expect(await claimsWith([other]).claim(resolved, [winner(POS_A)], Date.now())).toBe(false);
    const close = hooked((pos) => ({
      intent: { kind: "close", key: `close-${pos}`, wallet: WALLET, strategy: "hooked", positionPubkey: pos },
    }));
    expect(await claimsWith([close]).claim(resolved, [winner(POS_A)], Date.now())).toBe(false);
    const throws = hooked(() => {
      throw new Error("boom");
    });
    expect(await claimsWith([throws]).claim(resolved, [winner(POS_A)], Date.now())).toBe(false);
    expect(errors).toEqual(["hooked", "hooked", "hooked"]);
    expect(await env.ledger.list()).toEqual([]);
  });

  it("asks a deferred claim (market_not_settled) again once the ledger's retry delay has passed", async () => {
    await env.cleanup();
    let nowSeconds = 1_700_000_000;
    env = await ledgerAndQueues("index-claims-deferred", {
      options: { maxTries: 3, retryAfterSeconds: 60 },
      nowSeconds: () => nowSeconds,
    });
    const claims = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))]);
    expect(await claims.claim(resolved, [winner(POS_A)], Date.now())).toBe(true);
    await env.ledger.defer(`claim-${POS_A}`, "market_not_settled: the claim is asked again later");
    // The watcher's next cycles see the same winner: not yet.
    nowSeconds += 10;
    expect(await claims.claim(resolved, [winner(POS_A)], Date.now())).toBe(true);
    nowSeconds += 61;
    expect(await claims.claim(resolved, [winner(POS_A)], Date.now())).toBe(true);
    expect(outcomes).toEqual(["claimed", "not_admitted", "claimed"]);
    expect((await env.ledger.get(`claim-${POS_A}`))?.status).toBe("pending");
    // One build per try: the first (deferred, done with) and the one asked again.
    expect(await buildJobs()).toEqual([`claim-${POS_A}`, `claim-${POS_A}`]);
  });

  it("a claim Redis fails to record leaves its wallet to a poll; the other wallet's claim is built", async () => {
    // A key of the wrong type: the admission script of this one claim fails, the batch's others do not.
    await env.redis.set(env.keys.ledgerIntent(`claim-${POS_B}`), "not a ledger record");
    const claims = claimsWith([configured(autoClaim, autoClaim.configSchema.parse({}))]);
    const other = testHolding({
      wallet: OTHER_WALLET,
      marketId: "mkt-1",
      eventId: "evt-1",
      position: POS_B,
      contractsMicro: "5000000",
    });
    const done = await claims.claimMany(
      [
        { market: resolved, winners: [winner(POS_A)] },
        { market: resolved, winners: [other] },
      ],
      Date.now(),
    );
    expect(done).toEqual([true, false]);
    expect(await buildJobs()).toEqual([`claim-${POS_A}`]);
    expect((await env.ledger.get(`claim-${POS_A}`))?.status).toBe("pending");
    expect(await env.redis.get(env.keys.ledgerIntent(`claim-${POS_B}`))).toBe("not a ledger record");
  });

  it("indexes the exact count a poll saw, which the hook reads", () => {
    const [held] = holdingsOf(WALLET, [position({ contracts: "2", contractsMicro: "2500000" })], {
      strategies: [],
      nowSeconds: 1_700_000_000,
    });
    expect(held?.contractsMicro).toBe("2500000");
  });
});
