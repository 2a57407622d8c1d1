import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../../src/sandbox/world/errors.js";
import { ServiceClaims } from "../../../../src/sandbox/world/service-claims.js";
import { positionView } from "../../../../src/sandbox/world/views.js";
import { SERVICE_CLAIM_DELAY_SECONDS } from "../../../../src/sandbox/world/world.js";
import { defined, worldFixture } from "./helpers.js";

const DAY = SERVICE_CLAIM_DELAY_SECONDS;

async function refusal(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

/** An open position of wallet 0 whose market the test resolves on the side held. */
function openWinner(fx: ReturnType<typeof worldFixture>) {
  const p = defined(
    fx.world
      .positionsOfWallet(0)
      .find((x) => fx.world.marketState(fx.world.marketOf(x)).status === "open" && x.closedAt === undefined),
  );
  return { p, market: fx.world.marketOf(p) };
}

describe("the service's automatic claim, on the world's clock", () => {
  it("claims a winner a day after its market settled, free, and not a second earlier", async () => {
    const fx = worldFixture();
    const { p, market } = openWinner(fx);
    const keepers = new ServiceClaims(fx.world, fx.chain);
    // The generated past's winners first (a day after genesis), so the counts below are this one's.
    fx.clock.advance(DAY);
    await keepers.sweep();
    fx.world.resolveMarket(market.marketId, p.isYes ? "yes" : "no", { settleAfterSeconds: 600 });
    fx.clock.advance(600 + DAY - 1);
    await keepers.sweep();
    expect(p.claimedAt).toBeUndefined();
    expect(fx.world.isClaimable(p)).toBe(true);
    fx.clock.advance(1);
    expect(await keepers.sweep()).toBeGreaterThanOrEqual(1);
    expect(p.claimedAt).toBe(fx.clock.nowSeconds());
    expect(p.claimedMicro).toBe(p.contracts * 1_000_000);
    const view = positionView(fx.world, p);
    expect(view).toMatchObject({
      claimed: true,
      claimable: false,
      claimedUsd: String(p.contracts * 1_000_000),
    });
    // Recorded as a payout with no fee; never claimed twice.
    expect(fx.world.liveHistory.find((h) => h.positionIndex === p.index)).toMatchObject({
      eventType: "payout_claimed",
      feeMicro: 0,
    });
    expect(await keepers.sweep()).toBe(0);
    const again = await refusal(
      fx.call("claimPosition", { positionPubkey: fx.world.positionPubkey(p) }, { ownerPubkey: fx.wallet(0) }),
    );
    expect(again.code).toBe("already_claimed");
  });

  it("claims a winner opened since genesis too (POST /orders), as any other", async () => {
    const fx = worldFixture();
    const { market } = openWinner(fx);
    const opened = {
      index: fx.world.reservePositionIndex(),
      ownerIndex: 0,
      marketIndex: market.index,
      isYes: true,
      contracts: 0.5,
      avgPriceMicro: 400_000,
      feesMicro: 2_000,
      openedAt: fx.clock.nowSeconds(),
      bump: 254,
      extraOrder: null,
    };
    expect(fx.world.applyOpen(opened, { signature: "opened", slot: 1 })).toBe(true);
    const keepers = new ServiceClaims(fx.world, fx.chain);
    fx.world.resolveMarket(market.marketId, "yes");
    fx.clock.advance(DAY);
    expect(await keepers.sweep()).toBeGreaterThanOrEqual(1);
    expect(opened).toMatchObject({ claimedMicro: 500_000 });
  });

  it("starts on the generated past at genesis: its winners are claimed a day after genesis", async () => {
    const fx = worldFixture();
    const winners = fx.world.positions.filter((x) => fx.world.isClaimable(x));
    expect(winners.length).toBeGreaterThan(0);
    const keepers = new ServiceClaims(fx.world, fx.chain);
    fx.clock.advance(DAY - 1);
    expect(await keepers.sweep()).toBe(0);
    fx.clock.advance(1);
    expect(await keepers.sweep()).toBe(winners.length);
    expect(winners.every((x) => x.claimedAt !== undefined)).toBe(true);
  });

  it("a market that needs no claim answers no_claim_required, and the service pays its winners", async () => {
    const fx = worldFixture();
    const { p, market } = openWinner(fx);
    fx.world.resolveMarket(market.marketId, p.isYes ? "yes" : "no", { needsClaim: false });
    expect(fx.world.isClaimable(p)).toBe(false);
    expect(positionView(fx.world, p)).toMatchObject({ claimable: false, claimed: false });
    const answer = await refusal(
      fx.call("claimPosition", { positionPubkey: fx.world.positionPubkey(p) }, { ownerPubkey: fx.wallet(0) }),
    );
    expect(answer.status).toBe(400);
    expect(answer).toMatchObject({ code: "no_claim_required", param: "positionPubkey" });
    expect(answer.message).toMatch(/no claim is required/);
    const keepers = new ServiceClaims(fx.world, fx.chain);
    fx.clock.advance(DAY - 1);
    await keepers.sweep();
    expect(p.claimedAt).toBeUndefined();
    fx.clock.advance(1);
    await keepers.sweep();
    expect(p.claimedMicro).toBe(p.contracts * 1_000_000);
  });

  it("never pays a losing, cancelled or sold position", async () => {
    const fx = worldFixture();
    const { p, market } = openWinner(fx);
    fx.world.resolveMarket(market.marketId, p.isYes ? "no" : "yes");
    fx.clock.advance(2 * DAY);
    await new ServiceClaims(fx.world, fx.chain).sweep();
    expect(p.claimedAt).toBeUndefined();
  });
});
