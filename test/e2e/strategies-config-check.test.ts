import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import { runCli } from "../helpers/keeper-harness.js";

/** `keeper config check` of `file` alone (no config from the environment). */
const configCheck = (file: string) => runCli(["config", "check", "--config", file], { KEEPER_CONFIG: "" });

const EXAMPLE = resolve("strategies/examples/close-at-multiple.ts");
const S = "strategies:\n  - name:";
/** A YAML flow mapping of the defaults with `fields` over them. */
function flow(defaults: Record<string, string | number>, fields: Record<string, string | number>): string {
  const merged = { ...defaults, ...fields };
  return `{ ${Object.entries(merged)
    .map(([k, v]) => `${k}: ${typeof v === "number" ? v : `'${v}'`}`)
    .join(", ")} }`;
}
const plan = (fields: Record<string, string | number>) =>
  `${S} dca\n    plans:\n      - ${flow({ id: "a", inAmountRaw: "100000000", numberOfOrders: 2, intervalSeconds: 60 }, fields)}\n`;
const order = (fields: Record<string, string | number>) =>
  `${S} limit-orders\n    orders:\n      - ${flow({ id: "o", side: "sell", inputDecimals: 6, outputDecimals: 6, price: "0.5" }, fields)}\n`;

/** One bad config per row: what it says, and the line `keeper config check` must print. */
const BAD: ReadonlyArray<[string, string, string | RegExp]> = [
  [
    "auto-claim: a negative minimum",
    `${S} auto-claim\n    minPayoutUsd: -1\n`,
    "strategies[0].minPayoutUsd: expected dollars >= 0",
  ],
  [
    "exit-rules: no rule at all",
    `${S} exit-rules\n    basis: after-fees\n`,
    "strategies[0]: configure at least one exit rule: takeProfitPct, stopLossPct, takeProfitPriceUsd, stopLossPriceUsd, trailingStopPct, closeBeforeSeconds",
  ],
  [
    "exit-rules: a zero take-profit",
    `${S} exit-rules\n    takeProfitPct: 0\n`,
    "strategies[0].takeProfitPct: expected a number between 0 and 10000",
  ],
  [
    "exit-rules: a selector that does not exist",
    `${S} exit-rules\n    takeProfitPct: 30\n    overrides:\n      - match: { series: crypto }\n        rules: { takeProfitPct: 10 }\n`,
    "strategies[0].overrides[0].match.series: unknown key",
  ],
  [
    // Categories are an open set on the live service: "all" (a filter) is the one name refused.
    "exit-rules: the all category",
    `${S} exit-rules\n    takeProfitPct: 30\n    overrides:\n      - match: { category: all }\n        rules: { takeProfitPct: 10 }\n`,
    "strategies[0].overrides[0].match.category: all is a filter of the events list, not a category",
  ],
  [
    "exit-rules: tags given as one string",
    `${S} exit-rules\n    takeProfitPct: 30\n    overrides:\n      - match: { tags: nba, provider: "" }\n        rules: { takeProfitPct: 10 }\n`,
    /strategies\[0\]\.overrides\[0\]\.match\.tags: expected a list of tags\n {2}strategies\[0\]\.overrides\[0\]\.match\.provider: expected a provider name such as polymarket, kalshi or bisonfi/,
  ],
  [
    "exit-rules: a stop-loss price above the take-profit price",
    `${S} exit-rules\n    takeProfitPriceUsd: '0.5'\n    stopLossPriceUsd: '0.6'\n`,
    "strategies[0].stopLossPriceUsd: must be below takeProfitPriceUsd",
  ],
  [
    "dca: one order",
    plan({ inputMint: "USDC", outputMint: "KEEP", numberOfOrders: 1 }),
    "strategies[0].plans[0].numberOfOrders: expected a whole number of orders between 2 and 1000",
  ],
  [
    "dca: an ambiguous symbol",
    plan({ inputMint: "MOON", outputMint: "USDC" }),
    /^ {2}strategies\[0\]\.plans\[0\]\.inputMint: "MOON" matches 2 tokens \(MOON \w+, MOON \w+\); give the mint$/m,
  ],
  [
    "dca: an unverified, suspicious token",
    plan({ inputMint: "USDC", outputMint: "DUST" }),
    /strategies\[0\]\.plans\[0\]\.outputMint: "DUST" \(\w+\) is not verified/,
  ],
  [
    "dca: a token nobody knows",
    plan({ inputMint: "USDC", outputMint: "BONK" }),
    'strategies[0].plans[0].outputMint: "BONK" matches no token by symbol or name; give the mint',
  ],
  [
    "dca: below the service's minimums",
    plan({ inputMint: "USDC", outputMint: "KEEP", inAmountRaw: "60000000" }),
    "strategies[0].plans[0].numberOfOrders: 2 orders of $30.00 each, below the minimum of $50.00 an order",
  ],
  [
    "limit-orders: an amount finer than the token",
    order({ inputMint: "KEEP", outputMint: "USDC", amount: "1.0000001" }),
    "strategies[0].orders[0].amount: has more decimals than the input token's 6",
  ],
  [
    "limit-orders: decimals that are not the token's",
    order({ inputMint: "KEEP", outputMint: "USDC", amount: "100", inputDecimals: 9 }),
    "strategies[0].orders[0].inputDecimals: 9, but KEEP has 6 decimals",
  ],
  [
    "limit-orders: an unverified token",
    order({ inputMint: "PIXEL", outputMint: "USDC", amount: "100" }),
    /strategies\[0\]\.orders\[0\]\.inputMint: "PIXEL" \(\w+\) is not verified/,
  ],
  [
    "limit-orders: a zero TTL",
    order({ inputMint: "KEEP", outputMint: "USDC", amount: "100", ttlSeconds: 0 }),
    "strategies[0].orders[0].ttlSeconds: expected a whole number of seconds between 1 and 31536000",
  ],
  [
    "sweep: a negative amount to keep",
    `${S} sweep\n    rules:\n      - { id: s, fromMint: USDC, toMint: KEEP, keepRaw: '-1' }\n`,
    "strategies[0].rules[0].keepRaw: expected an integer string of raw token units >= 0",
  ],
  [
    "sweep: a suspicious target token",
    `${S} sweep\n    rules:\n      - { id: s, fromMint: USDC, toMint: DUST, keepRaw: '0' }\n`,
    /strategies\[0\]\.rules\[0\]\.toMint: "DUST" \(\w+\) is not verified/,
  ],
  [
    "tokens: an organic score the token does not reach",
    `tokens:\n  minOrganicScore: 90\n${plan({ inputMint: "USDC", outputMint: "KEEP" })}`,
    /strategies\[0\]\.plans\[0\]\.outputMint: "KEEP" \(\w+\) has organic score 81, below tokens\.minOrganicScore 90/,
  ],
  [
    "tokens: a score out of range",
    "tokens:\n  minOrganicScore: 101\n",
    "tokens.minOrganicScore: expected a score between 0 and 100",
  ],
  [
    "protections: a negative limit",
    "protections:\n  dailyLossLimitUsd: -5\n",
    "protections.dailyLossLimitUsd: expected dollars above 0",
  ],
  [
    "protections: a stop-loss pause without its length",
    "protections:\n  stopLossPause: { afterExits: 3, windowSeconds: 60 }\n",
    "protections.stopLossPause.pauseSeconds: expected a whole number of seconds between 1 and 31536000",
  ],
  [
    "a user strategy: its own schema refuses",
    `${S} close-at-multiple\n    module: ${EXAMPLE}\n    multiple: 1\n`,
    "strategies[0].multiple: expected a multiple above 1 and at most 100, such as 2",
  ],
  [
    "an unknown strategy",
    `${S} nope\n`,
    'strategies[0].name: unknown strategy "nope" (built-in: auto-claim, exit-rules, dca, limit-orders, sweep)',
  ],
];

describe("keeper config check: each bad strategy config is refused with its path and rule (exit 2)", () => {
  let sandbox: RunningSandbox;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    dir = await mkdtemp(join(tmpdir(), "keeper-config-check-"));
  });
  afterAll(() => sandbox?.close());

  const write = async (name: string, body: string) => {
    const file = join(dir, `${name.replace(/\W+/g, "-")}.yaml`);
    // A config a keeper could start from: it names a wallet (config check refuses one with none).
    await writeFile(
      file,
      `service:\n  baseUrl: ${sandbox.url}\nwallets:\n  - pubkey: ${sandbox.wallets[0]}\n${body}`,
    );
    return file;
  };

  it.each(BAD)("%s", async (label, body, expected) => {
    const result = await configCheck(await write(label, body));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("keeper: invalid configuration:");
    if (typeof expected === "string") expect(result.stderr).toContain(`  ${expected}`);
    else expect(result.stderr).toMatch(expected);
  });

  it("accepts exit-rules selectors on category, tags and provider", async () => {
    const result = await configCheck(
      await write(
        "ok-selectors",
        `${S} exit-rules\n    stopLossPct: 20\n    overrides:\n      - match: { category: sports, side: yes }\n        rules: { stopLossPct: null }\n      - match: { tags: [nba, playoffs], provider: kalshi }\n        rules: { takeProfitPct: 50 }\n`,
      ),
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("strategies: exit-rules");
  });

  it("accepts tokens by symbol and name, and says what they resolved to", async () => {
    const result = await configCheck(
      await write("ok", plan({ inputMint: "USDC", outputMint: "Keeper Token" })),
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const keep = sandbox.world.tokens.byKey("keep")?.mint;
    expect(result.stdout).toContain(`strategies[0].plans[0].outputMint: "Keeper Token" is KEEP ${keep}`);
    expect(result.stdout).toContain("valid: mode live, 1 wallet(s), strategies: dca");
  });
});
