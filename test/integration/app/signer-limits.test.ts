import { readFile, writeFile } from "node:fs/promises";
import { Connection } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../src/api/index.js";
import type { RunningKeeper } from "../../../src/app/start-keeper.js";
import type { Intent } from "../../../src/core/intent.js";
import { simulateUnitsOn } from "../../../src/keeper/pipeline/assemble-swap.js";
import { type BuildApi, buildTransaction } from "../../../src/keeper/pipeline/build-transaction.js";
import { enqueueSign } from "../../../src/keeper/queues/enqueue.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { serviceBuildApi } from "../../helpers/build-api.js";
import {
  eventually,
  loadTestConfig,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../../helpers/keeper-harness.js";
import { testRedis } from "../../helpers/redis.js";

const PER_INTENT = 150_000_000n;
const PER_DAY = 250_000_000n;

/**
 * The signer's own limits, through the keeper's signer role as it runs: an attacker who can write to
 * Redis puts a swap intent and its (real, service-built) transaction on the ledger and queues the sign
 * job. The signer, configured from its own file (a sweep of USDC into KEEP, caps on USDC), refuses
 * what the file does not allow, whatever the row says, and nothing leaves the wallet on the chain.
 */
describe("signer limits: intents written to Redis are held to the signer's own config", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let client: ApiClient;
  let api: BuildApi;
  let wallet: string;
  let usdc: string;
  let keep: string;
  let usdt: string;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("signer-limits");
    wallet = sandbox.wallets[0] ?? "";
    usdc = sandbox.usdcMint;
    keep = sandbox.tokenMints.keep ?? "";
    usdt = sandbox.tokenMints.usdt ?? "";
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
    api = {
      ...serviceBuildApi(client),
      buildSwap: client.swap.build,
      simulateUnits: simulateUnitsOn(connection),
    };
    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      extra: `strategies:
  - name: sweep
    rules:
      - id: usdc-to-keep
        fromMint: USDC
        toMint: KEEP
        keepRaw: "999000000000"
`,
    });
    // The caps go in the signer's own section of the file.
    const yaml = await readFile(file, "utf8");
    await writeFile(
      file,
      yaml.replace(
        "signer:\n",
        `signer:\n  limits:\n    perIntent: { ${usdc}: "${PER_INTENT}" }\n    perDay: { ${usdc}: "${PER_DAY}" }\n`,
      ),
    );
    ({ keeper } = await startTestKeeper(await loadTestConfig(file), sandbox, ["signer"]));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  let counter = 0;
  /** What an attacker with Redis does: a swap intent, built by the real service, on the ledger and queued. */
  async function writeSwap(amount: bigint, outputMint = keep): Promise<string> {
    counter += 1;
    const intent: Intent = {
      key: `attacker-swap-${counter}`,
      kind: "swap",
      wallet,
      strategy: "sweep",
      inputMint: usdc,
      outputMint,
      amount: String(amount),
    };
    const built = await buildTransaction(api, intent);
    const admitted = await keeper.ledger.admit(intent);
    await keeper.ledger.update(intent.key, {
      status: "built",
      builds: 1,
      transaction: built.transaction,
      lastValidBlockHeight: built.lastValidBlockHeight,
      minInflowRaw: built.minInflowRaw,
      swapQuote: built.swapQuote,
    });
    await enqueueSign(keeper.queues.sign, intent.key, { tries: 1, recordId: admitted.recordId }, 1);
    return intent.key;
  }

  async function outcomeOf(key: string) {
    return eventually(`${key} signed or refused`, async () => {
      const row = await keeper.ledger.get(key);
      return row && ["confirmed", "refused", "failed"].includes(row.status) ? row : undefined;
    });
  }

  const spent = async () => usdcBalance(sandbox, wallet, usdc);

  it("refuses a swap beyond the per-intent cap, and one into a mint the config never named", async () => {
    const before = await spent();
    const beyond = await outcomeOf(await writeSwap(PER_INTENT + 1n));
    expect(beyond).toMatchObject({ status: "refused", reason: "cap_per_intent" });
    expect(beyond.error).toContain(`a swap of ${PER_INTENT + 1n} of mint ${usdc}`);
    const elsewhere = await outcomeOf(await writeSwap(1_000_000n, usdt));
    expect(elsewhere).toMatchObject({ status: "refused", reason: "mint_not_allowed" });
    expect(elsewhere.error).toContain(`output mint ${usdt}`);
    expect(await spent()).toBe(before);
    const metrics = await keeper.metrics.render();
    expect(metrics).toContain('keeper_policy_refusals_total{kind="swap",reason="cap_per_intent"} 1');
    expect(metrics).toContain('keeper_policy_refusals_total{kind="swap",reason="mint_not_allowed"} 1');
  }, 60_000);

  it("counts the day's swaps, and a Redis writer deleting the tally does not reopen the day", async () => {
    const start = await spent();
    expect(await outcomeOf(await writeSwap(140_000_000n))).toMatchObject({ status: "confirmed" });
    expect(await spent()).toBe(start - 140_000_000n);

    const over = await outcomeOf(await writeSwap(140_000_000n));
    expect(over).toMatchObject({ status: "refused", reason: "cap_per_day" });
    expect(over.error).toContain(`140000000 signed today (UTC), signer.limits.perDay allows ${PER_DAY}`);

    const tallies = await keeper.redis.keys(`${keeper.keys.signerSpent}:*`);
    expect(tallies).toHaveLength(1);
    await keeper.redis.del(...tallies);
    const afterDeletion = await outcomeOf(await writeSwap(140_000_000n));
    expect(afterDeletion).toMatchObject({ status: "refused", reason: "cap_per_day" });

    // What is left of the day still signs.
    expect(await outcomeOf(await writeSwap(110_000_000n))).toMatchObject({ status: "confirmed" });
    expect(await spent()).toBe(start - 250_000_000n);
  }, 90_000);
});
