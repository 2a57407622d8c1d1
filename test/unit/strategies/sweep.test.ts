import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import { intentSchema } from "../../../src/core/intent.js";
import type { InFlightIntent } from "../../../src/core/snapshot.js";
import type { StrategyState } from "../../../src/core/strategy.js";
import { sweep } from "../../../strategies/sweep.js";
import { inFlight, snapshot, WALLET } from "../../helpers/fixtures.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const now = new Date(1_700_000_000_000);
const rule = { id: "r", fromMint: USDC, toMint: SOL, keepRaw: "500", minSwapRaw: "10" };

function poll(balance: string | undefined, state: StrategyState = {}, flying: InFlightIntent[] = []) {
  return sweep.evaluate({
    snapshot: snapshot({ balances: balance === undefined ? {} : { [USDC]: balance }, inFlight: flying }),
    state,
    config: sweep.configSchema.parse({ rules: [rule] }),
    now,
  });
}

const swap = (round: number, amount: string, held: string) => ({
  kind: "swap",
  key: `sweep-${WALLET}-r-${round}`,
  wallet: WALLET,
  strategy: "sweep",
  inputMint: USDC,
  outputMint: SOL,
  amount,
  reason: `sweep: rule r holds ${held}, keeps 500, swaps ${amount} (raw units)`,
});

describe("sweep: one poll", () => {
  it.each<[string, string | undefined, ReturnType<typeof swap>[]]>([
    ["no balance known: nothing", undefined, []],
    ["below what it keeps", "400", []],
    ["an excess below minSwapRaw", "509", []],
    ["an excess at minSwapRaw", "510", [swap(1, "10", "510")]],
    ["a large excess", "1500", [swap(1, "1000", "1500")]],
  ])("%s", (_label, balance, expected) => {
    const { intents } = poll(balance);
    expect(intents).toEqual(expected);
    for (const intent of intents) intentSchema.parse(intent);
  });
});

describe("sweep: rounds across polls", () => {
  it("asks once while in flight, retries a failed round at the same balance, starts a new round otherwise", () => {
    const first = poll("1500");
    expect(first.intents).toEqual([swap(1, "1000", "1500")]);
    // In flight: nothing.
    expect(poll("1500", first.state, [inFlight(`sweep-${WALLET}-r-1`, "swap")]).intents).toEqual([]);
    // Not in flight, same balance: it failed; the same key again.
    expect(poll("1500", first.state).intents).toEqual([swap(1, "1000", "1500")]);
    // It landed (balance at what it keeps): nothing; then money came in: round 2.
    const landed = poll("500", first.state);
    expect(landed.intents).toEqual([]);
    expect(poll("800", landed.state).intents).toEqual([swap(2, "300", "800")]);
  });
});

describe("sweep: config refusals", () => {
  it.each<[Record<string, unknown>, string]>([
    [{ rules: [] }, "rules: expected at least one rule"],
    [
      { rules: [{ ...rule, keepRaw: "-1" }] },
      "rules[0].keepRaw: expected an integer string of raw token units >= 0",
    ],
    [{ rules: [{ ...rule, toMint: USDC }] }, "rules[0].toMint: must differ from fromMint"],
    [{ rules: [rule, rule] }, 'rules[1].id: duplicate id "r"'],
    [
      { rules: [{ ...rule, minSwapRaw: "0" }] },
      "rules[0].minSwapRaw: expected a positive integer string of raw token units",
    ],
  ])("%j", (config, problem) => {
    const parsed = sweep.configSchema.safeParse(config);
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(formatIssues(parsed.error)).toEqual([problem]);
  });
});
