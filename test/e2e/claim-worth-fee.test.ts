import { Connection } from "@solana/web3.js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { priorityFeeSettings, recentPriorityFeesOn } from "../../src/chain/priority-fee.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { PauseSwitch } from "../../src/keeper/operator/pause.js";
import { ClaimCostEstimator, solPriceFrom } from "../../src/keeper/reads/claim-cost.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { SERVICE_CLAIM_DELAY_SECONDS } from "../../src/sandbox/world/world.js";
import { TokenPrices } from "../../src/signer/token-prices.js";
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
import { testRedis } from "../helpers/redis.js";

/**
 * The service claims every winner itself, free, a day after settlement. Keeper claims at once only a
 * payout worth more than `minPayoutToCostRatio` times a claim's cost; a smaller one is left to the
 * service (ledger `left_to_service`), which pays it on the sandbox's clock.
 */
describe("claims worth their fee: a small payout left to the service's free claim, a large one claimed at once", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let small: Position;
  let large: Position;
  let costMicroUsd: bigint;
  let configFile: string;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-claim-worth-fee");
    wallet = sandbox.wallets[0] ?? "";
    // Two open positions of the wallet on two markets, of different sizes: a winner each, later.
    const open = (await positionsOf(sandbox, wallet))
      .filter((p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed)
      .sort((a, b) => Number(a.payoutUsd) - Number(b.payoutUsd) || Number(a.contracts) - Number(b.contracts));
    const [first, last] = [open[0], open.at(-1)];
    if (!first || !last || first.marketId === last.marketId || first.contracts === last.contracts)
      throw new Error("the sandbox seed no longer gives wallet 0 two open positions of different sizes");
    [small, large] = [first, last];
    const walletYaml = `wallets:\n  - pubkey: ${wallet}\n`;
    const probe = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix, { walletYaml }));
    // What the keeper will estimate a claim to cost: the same estimator over the same chain and search.
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const logger = pino({ level: "silent" });
    costMicroUsd = BigInt(
      await new ClaimCostEstimator({
        recentFees: recentPriorityFeesOn(new Connection(sandbox.chain?.url ?? ""), logger),
        settings: priorityFeeSettings(probe.signer),
        solPrice: solPriceFrom(new TokenPrices(client.tokens.search)),
        logger,
      }).microUsd(),
    );
    expect(costMicroUsd).toBeGreaterThan(0n);
    // A ratio that puts the line between the two payouts (their geometric mean).
    const payoutOf = (p: Position) => Number(p.contracts) * 1_000_000;
    const ratio = Math.round(Math.sqrt(payoutOf(small) * payoutOf(large)) / Number(costMicroUsd));
    configFile = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml,
      extra: `strategies:\n  - name: auto-claim\n    minPayoutToCostRatio: ${ratio}\n`,
    });
    const config = await loadTestConfig(configFile);
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("claims the large payout at once, leaves the small one, and the service pays it a day later", async () => {
    // The generated past's winners are dealt with first (claimed or left), so what follows is these two.
    const past = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
    await eventually(
      "the earlier winners claimed or left",
      async () => {
        const rows = (await keeper.ledger.list()).filter(
          (r) => r.kind === "claim" && (r.status === "confirmed" || r.status === "left_to_service"),
        );
        return rows.length >= past.length ? rows : undefined;
      },
      60_000,
    );
    const beforeLarge = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    for (const p of [small, large]) sandbox.world.resolveMarket(p.marketId, p.isYes ? "yes" : "no");

    const claimed = await eventually(
      "the large payout claimed at once",
      async () => {
        const row = await keeper.ledger.get(`claim-${large.pubkey}`);
        return row?.status === "confirmed" ? row : undefined;
      },
      60_000,
    );
    expect(claimed.amountMicroUsd).toBe(String(Number(large.contracts) * 1_000_000));
    const left = await eventually(
      "the small payout left to the service",
      async () => {
        const row = await keeper.ledger.get(`claim-${small.pubkey}-left`);
        return row?.status === "left_to_service" ? row : undefined;
      },
      60_000,
    );
    expect(left.reason).toMatch(
      /^left to the service's free claim: payout \$\d+\.\d+ is not worth more than \d+x/,
    );
    expect(await keeper.ledger.get(`claim-${small.pubkey}`)).toBeUndefined();
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - beforeLarge).toBe(
      BigInt(Number(large.contracts) * 1_000_000),
    );
    // Visible where an operator looks: `keeper ledger` and the status page's ledger, filtered by it.
    const cli = await runCli(["ledger", "--json", "--config", configFile]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toContainEqual(
      expect.objectContaining({ key: `claim-${small.pubkey}-left`, status: "left_to_service" }),
    );
    const page = await (await fetch(`${keeper.ops?.url ?? ""}/?status=left_to_service`)).text();
    expect(page).toContain(`claim-${small.pubkey}-left`);
    expect(page).not.toContain(`data-key="claim-${large.pubkey}"`);
    // Recorded once, not on every poll: a few more polls add nothing. A poll that read the positions
    // before the service showed the large claim done may still propose it (refused: done), so the
    // count is taken once the service shows it and a poll after that finished.
    const polls = async () => Number((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) ?? 0);
    const refusedDone = async () =>
      Number(
        /keeper_intents_not_admitted_total\{[^}]*reason="done"[^}]*\} (\d+)/.exec(
          await keeper.metrics.render(),
        )?.[1] ?? 0,
      );
    await eventually(
      "the service showing the large claim done",
      async () =>
        (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === large.pubkey)?.claimed
          ? true
          : undefined,
      30_000,
    );
    const afterShown = await polls();
    await eventually(
      "a poll after that",
      async () => ((await polls()) >= afterShown + 1 ? true : undefined),
      30_000,
    );
    const doneBefore = await refusedDone();
    const seen = await polls();
    await eventually("two more polls", async () => ((await polls()) >= seen + 2 ? true : undefined), 30_000);
    const metrics = await keeper.metrics.render();
    const leftTotal = /keeper_claims_without_transaction_total\{status="left_to_service"\} (\d+)/.exec(
      metrics,
    );
    const leftRows = (await keeper.ledger.list()).filter((r) => r.status === "left_to_service");
    expect(Number(leftTotal?.[1])).toBe(leftRows.length);
    expect(await refusedDone()).toBe(doneBefore);

    // A day later on the sandbox's clock the service claims it, free. The keeper is paused meanwhile,
    // so the balance moves by the service's claims alone: the payouts Keeper left to it.
    const pause = new PauseSwitch(keeper.redis, keeper.keys);
    await pause.pause("the service's claim, measured alone", Math.floor(Date.now() / 1000));
    expect(await keeper.ledger.inFlight(wallet)).toEqual([]);
    const leftPayouts = leftRows
      .filter((r) => r.wallet === wallet)
      .reduce(
        (sum, r) => sum + BigInt(r.intent.kind === "claim" ? (r.intent.expectedPayoutMicroUsd ?? 0) : 0),
        0n,
      );
    const beforeService = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    const advanced = await fetch(`${sandbox.url}/__sandbox/clock/advance`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seconds: SERVICE_CLAIM_DELAY_SECONDS + 1 }),
    });
    expect(advanced.status).toBe(200);
    expect(((await advanced.json()) as { serviceClaims: number }).serviceClaims).toBeGreaterThanOrEqual(1);
    const afterService = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    expect(afterService - beforeService).toBe(leftPayouts);
    const listed = (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === small.pubkey);
    expect(listed).toMatchObject({
      claimed: true,
      claimable: false,
      claimedUsd: String(Number(small.contracts) * 1_000_000),
    });

    // Resumed: nothing is left to do for it, no claim of Keeper's ever.
    await pause.resume();
    const resumed = await polls();
    await eventually(
      "polls after the resume",
      async () => ((await polls()) >= resumed + 2 ? true : undefined),
      30_000,
    );
    expect(await keeper.ledger.get(`claim-${small.pubkey}`)).toBeUndefined();
    expect((await keeper.ledger.get(`claim-${small.pubkey}-left`))?.status).toBe("left_to_service");
  }, 180_000);
});
