import { createTransferCheckedInstruction } from "@solana/spl-token";
import { Connection, Keypair, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApiClient } from "../../../src/api/index.js";
import { expectedInflow } from "../../../src/chain/inflow-rules.js";
import type { PolicyConfig } from "../../../src/chain/policy.js";
import type { Intent } from "../../../src/core/intent.js";
import type { SwapQuote } from "../../../src/core/swap-quote.js";
import type { LocalChain } from "../../../src/sandbox/chain/local-chain.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { RedisAttemptStore } from "../../../src/signer/attempt-store.js";
import { DayTally } from "../../../src/signer/day-tally.js";
import { SignerGuard } from "../../../src/signer/intent-guard.js";
import type { Wallets } from "../../../src/signer/keys.js";
import { type AllowedMints, SignerLimits } from "../../../src/signer/limits.js";
import { signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { TokenPrices } from "../../../src/signer/token-prices.js";
import { sandboxWallets, startTestSandbox } from "../../helpers/keeper-harness.js";
import { testRedis } from "../../helpers/redis.js";
import { captureLogger } from "./helpers.js";
import { buildTransaction, toBase64 } from "./tx-builders.js";

const DECIMALS = 6;
/** $100 of USDC ($1) for KEEP ($0.42, 6 decimals): 238,095,238 raw KEEP at the service's prices. */
const IN_AMOUNT = 100_000_000n;
/** What the sandbox's swap quotes for it (its 20 bps fee off), and the build's threshold at 50 bps. */
const QUOTED_KEEP = 237_619_047n;
const QUOTE_THRESHOLD = 236_430_951n;

/**
 * Keeper's own floor of a swap, through the real sign path: the signer reads the service's prices
 * (the sandbox's token search over HTTP) itself, holds the simulation on the sandbox's chain to the
 * floor, and refuses quotes that are not the intent's or stray from those prices. Whatever the quote
 * on the ledger row says (a worker wrote it to Redis) can only raise the floor.
 */
describe("swap floor: the signer's own minimum output", () => {
  let sandbox: RunningSandbox;
  let chain: LocalChain;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let connection: Connection;
  let wallets: Wallets;
  let attempts: RedisAttemptStore;
  let guard: SignerGuard;
  let wallet: PublicKey;
  let usdc: PublicKey;
  let keep: PublicKey;
  /** A mint on the chain that the service's token search does not know. */
  let unpriced: PublicKey;
  const stranger = Keypair.generate();
  /** Holds KEEP and pays it out in the hand-built swaps (co-signing, as a pool's vault would). */
  const vault = Keypair.generate();
  let walletUsdc: PublicKey;
  let walletKeep: PublicKey;
  let strangerUsdc: PublicKey;
  /** The input's destination in the legitimate shape: a token account of a pool's (off-curve) address. */
  let poolUsdc: PublicKey;
  let vaultKeep: PublicKey;
  const policy: PolicyConfig = {
    maxComputeUnitPriceMicroLamports: 1_000_000n,
    maxPriorityFeeLamports: 1_000_000n,
    checkBlockhashWithRpc: true,
  };

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    chain = sandbox.chain.chain;
    connection = new Connection(sandbox.chain.url, "confirmed");
    redis = await testRedis("swap-floor");
    wallets = sandboxWallets(sandbox);
    attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
    wallet = new PublicKey(sandbox.wallets[0] ?? "");
    usdc = new PublicKey(sandbox.usdcMint);
    keep = new PublicKey(sandbox.tokenMints.keep ?? "");
    unpriced = chain.createMint({ address: Keypair.generate(), decimals: DECIMALS, authority: null });
    walletUsdc = chain.mintTo(usdc, wallet, 0n);
    walletKeep = chain.mintTo(keep, wallet, 0n);
    chain.mintTo(unpriced, wallet, 0n);
    strangerUsdc = chain.mintTo(usdc, stranger.publicKey, 0n);
    const [poolAuthority] = PublicKey.findProgramAddressSync([Buffer.from("pool")], vault.publicKey);
    poolUsdc = chain.mintTo(usdc, poolAuthority, 0n);
    vaultKeep = chain.mintTo(keep, vault.publicKey, 10_000_000_000n);
    chain.mintTo(unpriced, vault.publicKey, 10_000_000_000n);
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const swaps: AllowedMints = {
      input: new Set([usdc.toBase58()]),
      output: new Set([keep.toBase58(), unpriced.toBase58()]),
    };
    const none: AllowedMints = { input: new Set(), output: new Set() };
    guard = new SignerGuard(
      new SignerLimits(
        {
          allowedMints: { swap: swaps, createTrigger: none, createRecurring: none },
          perIntent: new Map(),
          perDay: new Map(),
        },
        new DayTally(redis.redis, `${redis.prefix}:signer:spent`),
      ),
      new TokenPrices(client.tokens.search),
      { maxPriceDeviationBps: 500, defaultSlippageBps: 50 },
    );
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  function swapIntent(outputMint = keep): Extract<Intent, { kind: "swap" }> {
    return {
      key: `swap-floor-${Math.random().toString(36).slice(2, 10)}`,
      kind: "swap",
      wallet: wallet.toBase58(),
      strategy: "test",
      inputMint: usdc.toBase58(),
      outputMint: outputMint.toBase58(),
      amount: String(IN_AMOUNT),
    };
  }

  function quoteOf(intent: Extract<Intent, { kind: "swap" }>, over: Partial<SwapQuote> = {}): SwapQuote {
    return {
      inputMint: intent.inputMint,
      inAmount: intent.amount,
      outputMint: intent.outputMint,
      outAmount: String(QUOTED_KEEP),
      otherAmountThreshold: String(QUOTE_THRESHOLD),
      ...over,
    };
  }

  /** The wallet's input to `to`, and the vault's `paid` of the output mint to the wallet. */
  function swapInstructions(to: PublicKey, paid: bigint, outputMint = keep): TransactionInstruction[] {
    const instructions = [
      createTransferCheckedInstruction(walletUsdc, usdc, to, wallet, IN_AMOUNT, DECIMALS),
    ];
    if (paid > 0n) {
      const from = outputMint.equals(keep) ? vaultKeep : chain.mintTo(outputMint, vault.publicKey, 0n);
      const into = outputMint.equals(keep) ? walletKeep : chain.mintTo(outputMint, wallet, 0n);
      instructions.push(
        createTransferCheckedInstruction(from, outputMint, into, vault.publicKey, paid, DECIMALS),
      );
    }
    return instructions;
  }

  function balances() {
    return {
      sol: chain.lamportsOf(wallet),
      usdc: chain.tokenBalance(wallet, usdc),
      keep: chain.tokenBalance(wallet, keep),
      strangerUsdc: chain.tokenBalance(stranger.publicKey, usdc),
    };
  }

  /** Runs the sign path as the keeper's sign worker does (the row's threshold as minInflowRaw). */
  async function sign(
    intent: Extract<Intent, { kind: "swap" }>,
    instructions: TransactionInstruction[],
    swapQuote: unknown,
  ) {
    const bh = await connection.getLatestBlockhash("confirmed");
    // The vault co-signs only where it pays.
    const coSigners = instructions.length > 1 ? [vault] : [];
    const tx = buildTransaction({ payer: wallet, blockhash: bh.blockhash, coSigners, instructions });
    const threshold = (swapQuote as Partial<SwapQuote> | undefined)?.otherAmountThreshold;
    const inflow = expectedInflow(intent, threshold !== undefined ? { minInflowRaw: threshold } : {}, {
      payoutMints: [usdc.toBase58()],
      toleranceBps: 50,
    });
    const { logger } = captureLogger();
    return signAndSubmit({
      intent,
      transactionBase64: toBase64(tx),
      lastValidBlockHeight: bh.lastValidBlockHeight,
      wallets,
      connection,
      policyConfig: policy,
      ...(inflow ? { inflow } : {}),
      guard,
      swapQuote,
      attempts,
      logger,
    });
  }

  it.each([
    [
      "a plain transfer of the input to a stranger, with the build's threshold 0",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { otherAmountThreshold: "0" }),
        instructions: swapInstructions(strangerUsdc, 0n),
      }),
      // Two rules refuse it; the destination's runs first (the floor alone: the next case).
      "outflow_destination",
      /is another wallet \(a key on the curve\)/,
    ],
    [
      "the input paid into a pool that pays nothing back, with the build's threshold 0",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { otherAmountThreshold: "0" }),
        instructions: swapInstructions(poolUsdc, 0n),
      }),
      "swap_below_floor",
      /brings the wallet 0 of mint \w+, expected at least 236430951/,
    ],
    [
      "an output below Keeper's floor though above the build's (lowered) threshold",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { otherAmountThreshold: "1" }),
        instructions: swapInstructions(poolUsdc, QUOTE_THRESHOLD - 1n),
      }),
      "swap_below_floor",
      /floor 236430951: the largest of the build's threshold 1, the quote less slippage 236430951, the fair output 238095238 less signer.maxPriceDeviationPct 226190476\) brings the wallet 236430950 of mint \w+, expected at least 236430951/,
    ],
    [
      "a quote and threshold lowered together (slippage 100 %): held to the fair output less 5 %",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { outAmount: "226190477", otherAmountThreshold: "0" }),
        instructions: swapInstructions(poolUsdc, 226_190_475n),
        slippageBps: 10_000,
      }),
      "swap_below_floor",
      /brings the wallet 226190475 of mint \w+, expected at least 226190476/,
    ],
    [
      "a quote whose inAmount is not the intent's",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { inAmount: "1000000" }),
        instructions: swapInstructions(poolUsdc, QUOTED_KEEP),
      }),
      "swap_quote_mismatch",
      /inAmount 1000000, the intent's 100000000/,
    ],
    [
      "a quote whose inputMint and outputMint are not the intent's",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { inputMint: keep.toBase58(), outputMint: usdc.toBase58() }),
        instructions: swapInstructions(poolUsdc, QUOTED_KEEP),
      }),
      "swap_quote_mismatch",
      /inputMint \w+, the intent's \w+; outputMint \w+, the intent's \w+/,
    ],
    [
      "a quote whose implied price is 20 % off the service's prices (threshold to match)",
      (intent: Extract<Intent, { kind: "swap" }>) => ({
        quote: quoteOf(intent, { outAmount: "190476190", otherAmountThreshold: "189523809" }),
        instructions: swapInstructions(poolUsdc, 190_000_000n),
      }),
      "price_deviation",
      /gives 190476190 of \w+ for 100000000 of \w+; at the service's prices \(\$1 and \$0.42\) that is 238095238/,
    ],
    [
      "no quote on the ledger row",
      () => ({ quote: undefined, instructions: swapInstructions(poolUsdc, QUOTED_KEEP) }),
      "swap_quote_missing",
      /no readable quote/,
    ],
  ])("refuses %s, and nothing moves", async (_name, make, reason, detail) => {
    const intent = swapIntent();
    const made = make(intent) as {
      quote: unknown;
      instructions: TransactionInstruction[];
      slippageBps?: number;
    };
    const asked = made.slippageBps !== undefined ? { ...intent, slippageBps: made.slippageBps } : intent;
    const before = balances();
    const signs = vi.spyOn(wallets, "sign");
    try {
      const outcome = await sign(asked, made.instructions, made.quote);
      expect(outcome).toMatchObject({ outcome: "refused", reason });
      if (outcome.outcome === "refused") expect(outcome.detail).toMatch(detail);
      expect(signs).not.toHaveBeenCalled();
      expect(await attempts.get(asked.key)).toMatchObject({ status: "refused", reason });
      expect(balances()).toEqual(before);
    } finally {
      signs.mockRestore();
    }
  });

  it("refuses a swap into a mint the service gives no price for, naming it", async () => {
    const intent = swapIntent(unpriced);
    const before = balances();
    const outcome = await sign(
      intent,
      swapInstructions(poolUsdc, QUOTED_KEEP, unpriced),
      quoteOf(intent, { outputMint: unpriced.toBase58() }),
    );
    expect(outcome).toMatchObject({ outcome: "refused", reason: "price_unknown" });
    if (outcome.outcome === "refused") expect(outcome.detail).toContain(unpriced.toBase58());
    expect(balances()).toEqual(before);
  });

  it("signs a swap that pays at least the floor: the input leaves and the output arrives", async () => {
    const intent = swapIntent();
    const before = balances();
    const outcome = await sign(intent, swapInstructions(poolUsdc, QUOTE_THRESHOLD), quoteOf(intent));
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    const after = balances();
    expect(after.usdc).toBe(before.usdc - IN_AMOUNT);
    expect(after.keep).toBe(before.keep + QUOTE_THRESHOLD);
  });
});
