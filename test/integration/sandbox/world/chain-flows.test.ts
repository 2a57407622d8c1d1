import { getAssociatedTokenAddressSync, NATIVE_MINT, TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Connection,
  type Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiInstruction } from "../../../../src/core/schemas/common.js";
import { swapBuildResponseSchema } from "../../../../src/core/schemas/swap.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { waitFor } from "../../chain/chain-harness.js";

/**
 * The sandbox's transactions on the real local chain, as a client drives them: built over HTTP,
 * signed by the wallet's key, sent to the chain's RPC (or the area's execute endpoint). Assertions are
 * on-chain balances and the world's state after landing.
 */
let sandbox: RunningSandbox;
let connection: Connection;

/** Wallets 0 and 1 hold catalogue tokens; wallets 2 and 3 only SOL and USDC. */
const TOKEN_WALLETS = 2;

beforeAll(async () => {
  sandbox = await startCheckedSandbox({
    port: 0,
    clock: new DrivenClock(),
    rateLimit: false,
    chain: { slotMs: 25 },
    walletFunding: {
      sol: 10,
      usdcRaw: 1_000_000_000n,
      tokensRaw: { sol: 1_000_000_000n, keep: 2_000_000_000n },
      tokenWallets: TOKEN_WALLETS,
    },
  });
  connection = new Connection(sandbox.chain?.url ?? "", { commitment: "confirmed" });
});
afterAll(() => sandbox.close());

async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      "x-api-key": sandbox.apiKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBe(200);
  return JSON.parse(text) as T;
}

function mintOf(key: string): PublicKey {
  const mint = sandbox.world.tokens.byKey(key)?.mint;
  if (mint === undefined) throw new Error(`no catalogue token ${key}`);
  return new PublicKey(mint);
}

function signBase64(base64: string, signer: Keypair): VersionedTransaction {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([signer]);
  return tx;
}

/** Raw token balance of the owner's associated account for `mint`, read over RPC (0 when absent). */
async function tokenBalance(owner: PublicKey, mint: PublicKey): Promise<bigint> {
  const programId = (await connection.getAccountInfo(mint))?.owner;
  if (programId === undefined) throw new Error(`mint ${mint.toBase58()} is not on the chain`);
  const account = getAssociatedTokenAddressSync(mint, owner, true, programId);
  if ((await connection.getAccountInfo(account)) === null) return 0n;
  return BigInt((await connection.getTokenAccountBalance(account)).value.amount);
}

/** Waits (bounded) until the chain reports the signature, and returns its status. */
async function landed(signature: string) {
  return waitFor(async () => {
    const { value } = await connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
    return value[0] ?? undefined;
  }, `signature ${signature}`);
}

async function positionsOf(owner: string) {
  const page = await api<{ data: Record<string, unknown>[] }>(
    "GET",
    `/prediction/v1/positions?ownerPubkey=${owner}&end=100`,
  );
  return page.data;
}

describe("world on the local chain", () => {
  it("(a) a claim lands, pays the owner in USDC, and only then is the position claimed", async () => {
    const owner = sandbox.world.walletKeypair(0);
    const ownerKey = owner.publicKey.toBase58();
    const claimable = (await positionsOf(ownerKey)).find((p) => p.claimable === true);
    expect(claimable, "wallet 0 starts with a claimable position").toBeDefined();
    const pubkey = String(claimable?.pubkey);
    const usdc = new PublicKey(sandbox.usdcMint);
    const before = await tokenBalance(owner.publicKey, usdc);

    const claim = await api<{ transaction: string; position: { payoutAmountUsd: string } }>(
      "POST",
      `/prediction/v1/positions/${pubkey}/claim`,
      { ownerPubkey: ownerKey },
    );
    const built = (await positionsOf(ownerKey)).find((p) => p.pubkey === pubkey);
    expect(built).toMatchObject({ claimable: true, claimed: false });

    const tx = signBase64(claim.transaction, owner);
    const signature = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    expect((await landed(signature)).err).toBeNull();

    expect(await tokenBalance(owner.publicKey, usdc)).toBe(before + BigInt(claim.position.payoutAmountUsd));
    const after = (await positionsOf(ownerKey)).find((p) => p.pubkey === pubkey);
    expect(after).toMatchObject({ claimable: false, claimed: true });
  });

  it("(b) a close lands, pays the net proceeds, and the position is gone", async () => {
    const owner = sandbox.world.walletKeypair(0);
    const ownerKey = owner.publicKey.toBase58();
    const open = (await positionsOf(ownerKey)).find(
      (p) => p.claimable === false && p.claimed === false && p.contracts !== "0",
    );
    const pubkey = String(open?.pubkey);
    const usdc = new PublicKey(sandbox.usdcMint);
    const before = await tokenBalance(owner.publicKey, usdc);

    const close = await api<{
      transaction: string;
      order: { orderCostUsd: string; estimatedTotalFeeUsd: string };
    }>("DELETE", `/prediction/v1/positions/${pubkey}`, { ownerPubkey: ownerKey });
    expect((await positionsOf(ownerKey)).some((p) => p.pubkey === pubkey)).toBe(true);

    const signature = await connection.sendRawTransaction(signBase64(close.transaction, owner).serialize());
    expect((await landed(signature)).err).toBeNull();

    const net = BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd);
    expect(await tokenBalance(owner.publicKey, usdc)).toBe(before + net);
    expect((await positionsOf(ownerKey)).some((p) => p.pubkey === pubkey)).toBe(false);
  });

  it("(c) a KEEP trigger order escrows its input; its cancel refunds it", async () => {
    const maker = sandbox.world.walletKeypair(1);
    const makerKey = maker.publicKey.toBase58();
    const keep = mintOf("keep");
    const makerBefore = await tokenBalance(maker.publicKey, keep);
    const making = 100_000_000n; // 100 KEEP, $42

    const created = await api<{ requestId: string; transaction: string; order: string }>(
      "POST",
      "/trigger/v1/createOrder",
      {
        inputMint: keep.toBase58(),
        outputMint: sandbox.usdcMint,
        maker: makerKey,
        payer: makerKey,
        params: { makingAmount: String(making), takingAmount: "45000000" },
      },
    );
    expect(sandbox.world.swapOrders.has(created.order)).toBe(false);
    // As on the live service: the order is a program-derived address, and its escrow is its own
    // token account of the input mint.
    const escrow = new PublicKey(created.order);
    expect(PublicKey.isOnCurve(escrow.toBytes()), "an order account no key signs for").toBe(false);
    const escrowBefore = await tokenBalance(escrow, keep);
    expect(escrowBefore).toBe(0n);
    const executed = await api("POST", "/trigger/v1/execute", {
      requestId: created.requestId,
      signedTransaction: Buffer.from(signBase64(created.transaction, maker).serialize()).toString("base64"),
    });
    expect(executed).toMatchObject({ status: "Success" });
    expect(await tokenBalance(maker.publicKey, keep)).toBe(makerBefore - making);
    expect(await tokenBalance(escrow, keep)).toBe(escrowBefore + making);
    expect(sandbox.world.swapOrders.get(created.order)?.status).toBe("open");

    const cancel = await api<{ requestId: string; transaction: string }>("POST", "/trigger/v1/cancelOrder", {
      maker: makerKey,
      order: created.order,
    });
    const refunded = await api("POST", "/trigger/v1/execute", {
      requestId: cancel.requestId,
      signedTransaction: Buffer.from(signBase64(cancel.transaction, maker).serialize()).toString("base64"),
    });
    expect(refunded).toMatchObject({ status: "Success" });
    expect(await tokenBalance(maker.publicKey, keep)).toBe(makerBefore);
    expect(await tokenBalance(escrow, keep)).toBe(escrowBefore);
    expect(sandbox.world.swapOrders.get(created.order)?.status).toBe("cancelled");
  });

  it("(c) a trigger order the service fills: the deposit goes to the pool, the maker gets its takingAmount", async () => {
    const maker = sandbox.world.walletKeypair(1);
    const makerKey = maker.publicKey.toBase58();
    const [keep, usdc] = [mintOf("keep"), new PublicKey(sandbox.usdcMint)];
    const pool = sandbox.chain?.assets.pool as PublicKey;
    const [keepBefore, usdcBefore, poolKeepBefore] = [
      await tokenBalance(maker.publicKey, keep),
      await tokenBalance(maker.publicKey, usdc),
      await tokenBalance(pool, keep),
    ];
    const created = await api<{ requestId: string; transaction: string; order: string }>(
      "POST",
      "/trigger/v1/createOrder",
      {
        inputMint: keep.toBase58(),
        outputMint: usdc.toBase58(),
        maker: makerKey,
        payer: makerKey,
        params: { makingAmount: "50000000", takingAmount: "21000000" },
      },
    );
    await api("POST", "/trigger/v1/execute", {
      requestId: created.requestId,
      signedTransaction: Buffer.from(signBase64(created.transaction, maker).serialize()).toString("base64"),
    });
    const escrow = new PublicKey(created.order);
    expect(await tokenBalance(escrow, keep)).toBe(50_000_000n);

    sandbox.world.settleOrder(created.order, "filled");
    await waitFor(
      async () =>
        (await tokenBalance(maker.publicKey, usdc)) === usdcBefore + 21_000_000n ? true : undefined,
      "the fill's payout",
    );
    expect(await tokenBalance(escrow, keep)).toBe(0n);
    expect(await tokenBalance(pool, keep)).toBe(poolKeepBefore + 50_000_000n);
    expect(await tokenBalance(maker.publicKey, keep)).toBe(keepBefore - 50_000_000n);
  });

  it("(c) a SOL trigger order from a wallet without wrapped SOL wraps, escrows, and unwraps on cancel", async () => {
    const maker = sandbox.world.walletKeypair(TOKEN_WALLETS);
    const makerKey = maker.publicKey.toBase58();
    const wrappedAccount = getAssociatedTokenAddressSync(NATIVE_MINT, maker.publicKey);
    const making = 100_000_000n; // 0.1 SOL, $15

    const created = await api<{ requestId: string; transaction: string; order: string }>(
      "POST",
      "/trigger/v1/createOrder",
      {
        inputMint: NATIVE_MINT.toBase58(),
        outputMint: sandbox.usdcMint,
        maker: makerKey,
        payer: makerKey,
        params: { makingAmount: String(making), takingAmount: "14000000" },
      },
    );
    const escrow = new PublicKey(created.order);
    const escrowBefore = await tokenBalance(escrow, NATIVE_MINT);
    const executed = await api<{ signature: string }>("POST", "/trigger/v1/execute", {
      requestId: created.requestId,
      signedTransaction: Buffer.from(signBase64(created.transaction, maker).serialize()).toString("base64"),
    });
    expect(executed).toMatchObject({ status: "Success" });
    expect(await tokenBalance(escrow, NATIVE_MINT)).toBe(escrowBefore + making);
    expect(await connection.getAccountInfo(wrappedAccount), "wrapped for the order, then closed").toBeNull();
    const lamportsAfterEscrow = BigInt(await connection.getBalance(maker.publicKey));

    const cancel = await api<{ requestId: string; transaction: string }>("POST", "/trigger/v1/cancelOrder", {
      maker: makerKey,
      order: created.order,
    });
    const refunded = await api<{ signature: string }>("POST", "/trigger/v1/execute", {
      requestId: cancel.requestId,
      signedTransaction: Buffer.from(signBase64(cancel.transaction, maker).serialize()).toString("base64"),
    });
    expect(refunded).toMatchObject({ status: "Success" });
    const fee = BigInt(
      (await connection.getTransaction(refunded.signature, { maxSupportedTransactionVersion: 0 }))?.meta
        ?.fee ?? Number.NaN,
    );
    expect(await tokenBalance(escrow, NATIVE_MINT)).toBe(escrowBefore);
    expect(await connection.getAccountInfo(wrappedAccount), "refund unwrapped to SOL").toBeNull();
    expect(BigInt(await connection.getBalance(maker.publicKey))).toBe(lamportsAfterEscrow + making - fee);
  });

  it("(c) a KEEP recurring order escrows its whole input", async () => {
    const user = sandbox.world.walletKeypair(1);
    const userKey = user.publicKey.toBase58();
    const keep = mintOf("keep");
    const before = await tokenBalance(user.publicKey, keep);
    const inAmount = 300_000_000; // 300 KEEP, $126 in two orders
    const created = await api<{ requestId: string; transaction: string }>(
      "POST",
      "/recurring/v1/createOrder",
      {
        user: userKey,
        inputMint: keep.toBase58(),
        outputMint: sandbox.usdcMint,
        params: { time: { inAmount, numberOfOrders: 2, interval: 86_400 } },
      },
    );
    const executed = await api<{ order: string }>("POST", "/recurring/v1/execute", {
      requestId: created.requestId,
      signedTransaction: Buffer.from(signBase64(created.transaction, user).serialize()).toString("base64"),
    });
    expect(executed).toMatchObject({ status: "Success" });
    expect(await tokenBalance(user.publicKey, keep)).toBe(before - BigInt(inAmount));
    expect(sandbox.world.swapOrders.get(executed.order)).toMatchObject({ kind: "recurring", status: "open" });
    // The deposit sits in the order PDA's own KEEP account.
    const order = new PublicKey(executed.order);
    expect(PublicKey.isOnCurve(order.toBytes())).toBe(false);
    expect(await tokenBalance(order, keep)).toBe(BigInt(inAmount));
  });
});

const MAX_COMPUTE_UNITS = 1_400_000;

function toInstruction(ix: ApiInstruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(ix.programId),
    keys: ix.accounts.map((a) => ({
      pubkey: new PublicKey(a.pubkey),
      isSigner: a.isSigner,
      isWritable: a.isWritable,
    })),
    data: Buffer.from(ix.data, "base64"),
  });
}

/**
 * Assembles a swap build as api-gaps "Swap build" says: compute-unit limit (simulated ×1.2, capped),
 * computeBudgetInstructions, setupInstructions, swapInstruction, cleanupInstruction,
 * otherInstructions; payer is the taker; compiled v0 with the lookup tables the build names.
 */
async function assembleSwap(taker: Keypair, build: ReturnType<typeof swapBuildResponseSchema.parse>) {
  const tables = Object.entries(build.addressesByLookupTableAddress ?? {}).map(
    ([key, addresses]) =>
      new AddressLookupTableAccount({
        key: new PublicKey(key),
        state: {
          deactivationSlot: BigInt("18446744073709551615"),
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          addresses: addresses.map((a) => new PublicKey(a)),
        },
      }),
  );
  const body = [
    ...build.computeBudgetInstructions,
    ...build.setupInstructions,
    build.swapInstruction,
    ...(build.cleanupInstruction ? [build.cleanupInstruction] : []),
    ...build.otherInstructions,
  ].map(toInstruction);
  const recentBlockhash = new PublicKey(Uint8Array.from(build.blockhashWithMetadata.blockhash)).toBase58();
  const compile = (units: number) => {
    const message = new TransactionMessage({
      payerKey: taker.publicKey,
      recentBlockhash,
      instructions: [ComputeBudgetProgram.setComputeUnitLimit({ units }), ...body],
    }).compileToV0Message(tables);
    return new VersionedTransaction(message);
  };
  const simulation = await connection.simulateTransaction(compile(MAX_COMPUTE_UNITS), { sigVerify: false });
  expect(simulation.value.err, JSON.stringify(simulation.value.logs)).toBeNull();
  const units = Math.min(MAX_COMPUTE_UNITS, Math.ceil((simulation.value.unitsConsumed ?? 0) * 1.2));
  const tx = compile(units);
  tx.sign([taker]);
  return tx;
}

async function buildSwap(taker: PublicKey, input: PublicKey, output: PublicKey, amount: bigint) {
  const json = await api(
    "GET",
    `/swap/v2/build?inputMint=${input.toBase58()}&outputMint=${output.toBase58()}&amount=${amount}&taker=${taker.toBase58()}`,
  );
  return swapBuildResponseSchema.parse(json);
}

describe("swap on the local chain", () => {
  it("(d) USDC → SOL: built, assembled v0 with the lookup table, signed, sent; wrapped SOL arrives", async () => {
    const taker = sandbox.world.walletKeypair(0);
    const usdc = new PublicKey(sandbox.usdcMint);
    const [usdcBefore, solBefore] = [
      await tokenBalance(taker.publicKey, usdc),
      await tokenBalance(taker.publicKey, NATIVE_MINT),
    ];
    const build = await buildSwap(taker.publicKey, usdc, NATIVE_MINT, 15_000_000n);
    expect(Object.keys(build.addressesByLookupTableAddress ?? {})).toHaveLength(1);
    // The quote agrees with the service's own token prices: $15 of SOL at its search price, less the
    // pool's 0.2% fee (floored to a lamport); the threshold is the default 0.5% below it.
    const prices = await api<{ id: string; usdPrice: number }[]>(
      "GET",
      `/ultra/v1/search?query=${usdc.toBase58()},${NATIVE_MINT.toBase58()}`,
    );
    const priceOf = (mint: PublicKey) => prices.find((t) => t.id === mint.toBase58())?.usdPrice ?? Number.NaN;
    const expectedLamports = ((15 * priceOf(usdc)) / priceOf(NATIVE_MINT)) * 0.998 * 1e9;
    expect(Math.abs(Number(build.outAmount) - expectedLamports)).toBeLessThanOrEqual(1);
    expect(BigInt(build.otherAmountThreshold)).toBe((BigInt(build.outAmount) * 9_950n) / 10_000n);
    const tx = await assembleSwap(taker, build);
    expect(tx.message.addressTableLookups.length, "compiled against the lookup table").toBe(1);
    expect(
      await connection.getAccountInfo(tx.message.addressTableLookups[0]?.accountKey as PublicKey),
    ).not.toBeNull();

    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    expect(await tokenBalance(taker.publicKey, usdc)).toBe(usdcBefore - 15_000_000n);
    // The input went to a pool account whose authority no key signs for (a PDA), as on a live swap.
    const destination = new PublicKey(build.swapInstruction.accounts[2]?.pubkey ?? "");
    const poolAccount = sandbox.chain?.chain.tokenAccount(destination);
    if (poolAccount === undefined) throw new Error("the swap's destination is not a token account");
    expect(poolAccount.mint.toBase58()).toBe(sandbox.usdcMint);
    expect(PublicKey.isOnCurve(poolAccount.owner.toBytes())).toBe(false);
    // Paid by the pool in the same transaction, as a live swap pays.
    expect(await tokenBalance(taker.publicKey, NATIVE_MINT)).toBe(solBefore + BigInt(build.outAmount));
  });

  it("(d) SOL → BOLT from a wallet without tokens: wraps the input, unwraps the rest, BOLT arrives", async () => {
    const taker = sandbox.world.walletKeypair(TOKEN_WALLETS + 1);
    const bolt = mintOf("bolt");
    expect(await tokenBalance(taker.publicKey, bolt)).toBe(0n);
    const lamportsBefore = BigInt(await connection.getBalance(taker.publicKey));
    const build = await buildSwap(taker.publicKey, NATIVE_MINT, bolt, 200_000_000n);
    expect(build.cleanupInstruction, "closes the wrapped SOL account it opened").not.toBeNull();
    const tx = await assembleSwap(taker, build);
    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    expect(await tokenBalance(taker.publicKey, bolt)).toBe(BigInt(build.outAmount));
    const meta = (await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))?.meta;
    const boltAccountRent = BigInt(await connection.getMinimumBalanceForRentExemption(165));
    expect(BigInt(await connection.getBalance(taker.publicKey))).toBe(
      lamportsBefore - 200_000_000n - BigInt(meta?.fee ?? Number.NaN) - boltAccountRent,
    );
    expect(
      await connection.getAccountInfo(getAssociatedTokenAddressSync(NATIVE_MINT, taker.publicKey)),
    ).toBeNull();
  });

  it("(d) USDC → UMBRA (Token-2022): the output arrives on a Token-2022 account", async () => {
    const taker = sandbox.world.walletKeypair(1);
    const umbra = mintOf("umbra");
    expect((await connection.getAccountInfo(umbra))?.owner.toBase58()).toBe(TOKEN_2022_PROGRAM_ID.toBase58());
    const build = await buildSwap(taker.publicKey, new PublicKey(sandbox.usdcMint), umbra, 20_000_000n);
    const signature = await connection.sendRawTransaction((await assembleSwap(taker, build)).serialize());
    expect((await landed(signature)).err).toBeNull();
    expect(await tokenBalance(taker.publicKey, umbra)).toBe(BigInt(build.outAmount));
  });

  it("a swap the vault cannot pay is refused with 400 naming amount", async () => {
    const taker = sandbox.world.walletKeypair(0);
    const response = await fetch(
      `${sandbox.url}/swap/v2/build?inputMint=${mintOf("bolt").toBase58()}&outputMint=${NATIVE_MINT.toBase58()}` +
        `&amount=${10n ** 18n}&taker=${taker.publicKey.toBase58()}`,
      { headers: { "x-api-key": sandbox.apiKey } },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("amount");
  });

  it("the pool's payout is signed for its PDA by the pool program, nobody's key", async () => {
    const taker = sandbox.world.walletKeypair(TOKEN_WALLETS + 1);
    const wave = mintOf("wave");
    const waveBefore = await tokenBalance(taker.publicKey, wave);
    const build = await buildSwap(taker.publicKey, new PublicKey(sandbox.usdcMint), wave, 5_000_000n);
    const payout = build.otherInstructions[0] as ApiInstruction;
    expect(payout.programId).toBe(sandbox.chain?.assets.poolProgram.toBase58());
    expect(
      payout.accounts.every((a) => !a.isSigner),
      "no signature but the taker's",
    ).toBe(true);
    const tx = await assembleSwap(taker, build);
    expect(tx.message.header.numRequiredSignatures).toBe(1);
    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    const meta = (await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))?.meta;
    const pool = sandbox.chain?.assets.pool.toBase58();
    const waveOf = (list: NonNullable<typeof meta>["postTokenBalances"], owner?: string) =>
      BigInt(list?.find((b) => b.owner === owner && b.mint === wave.toBase58())?.uiTokenAmount.amount ?? "0");
    expect(waveOf(meta?.preTokenBalances, pool) - waveOf(meta?.postTokenBalances, pool)).toBe(
      BigInt(build.outAmount),
    );
    expect(await tokenBalance(taker.publicKey, wave)).toBe(waveBefore + BigInt(build.outAmount));
  });
});

describe("a hostile sandbox (redirectFunds)", () => {
  afterAll(() => sandbox.faults.clear());

  it("is switched on and off through the loopback admin route; a bad value is refused and changes nothing", async () => {
    const admin = (method: string, body?: unknown) =>
      fetch(`${sandbox.url}/__sandbox/faults`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
    const taker = sandbox.world.walletKeypair(0).publicKey;
    const strangerUsdc = getAssociatedTokenAddressSync(
      new PublicKey(sandbox.usdcMint),
      sandbox.chain?.assets.stranger.publicKey as PublicKey,
    ).toBase58();
    const destination = async () => {
      const build = await buildSwap(taker, new PublicKey(sandbox.usdcMint), mintOf("keep"), 1_000_000n);
      return { to: build.swapInstruction.accounts[2]?.pubkey, threshold: build.otherAmountThreshold };
    };

    const refused = await admin("POST", { redirectFunds: "yes" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: "redirectFunds: must be a boolean" });
    const honest = await destination();
    expect(honest.to).not.toBe(strangerUsdc);
    expect(honest.threshold).not.toBe("0");

    expect((await admin("POST", { redirectFunds: true })).status).toBe(200);
    expect(await (await admin("GET")).json()).toMatchObject({ redirectFunds: true });
    expect(await destination()).toEqual({ to: strangerUsdc, threshold: "0" });

    expect((await admin("DELETE")).status).toBe(200);
    expect(await destination()).toEqual(honest);
  });

  it("sends a swap's input and an order's deposit to the stranger, with a quote that asks for no output", async () => {
    const stranger = sandbox.chain?.assets.stranger.publicKey as PublicKey;
    expect(PublicKey.isOnCurve(stranger.toBytes()), "an ordinary key's account").toBe(true);
    const taker = sandbox.world.walletKeypair(0);
    const usdc = new PublicKey(sandbox.usdcMint);
    const keep = mintOf("keep");
    sandbox.faults.set({ redirectFunds: true });
    const [usdcBefore, keepBefore, strangerUsdcBefore, strangerKeepBefore] = [
      await tokenBalance(taker.publicKey, usdc),
      await tokenBalance(taker.publicKey, keep),
      await tokenBalance(stranger, usdc),
      await tokenBalance(stranger, keep),
    ];

    const waveBefore = await tokenBalance(taker.publicKey, mintOf("wave"));
    const build = await buildSwap(taker.publicKey, usdc, mintOf("wave"), 7_000_000n);
    expect(build.otherAmountThreshold).toBe("0");
    expect(BigInt(build.outAmount)).toBeGreaterThan(0n);
    const swapSignature = await connection.sendRawTransaction((await assembleSwap(taker, build)).serialize());
    expect((await landed(swapSignature)).err).toBeNull();
    expect(await tokenBalance(stranger, usdc)).toBe(strangerUsdcBefore + 7_000_000n);
    expect(await tokenBalance(taker.publicKey, usdc)).toBe(usdcBefore - 7_000_000n);
    // The quote promised outAmount; the pool pays one raw unit.
    expect(await tokenBalance(taker.publicKey, mintOf("wave"))).toBe(waveBefore + 1n);

    const created = await api<{ requestId: string; transaction: string; order: string }>(
      "POST",
      "/trigger/v1/createOrder",
      {
        inputMint: keep.toBase58(),
        outputMint: sandbox.usdcMint,
        maker: taker.publicKey.toBase58(),
        payer: taker.publicKey.toBase58(),
        params: { makingAmount: "20000000", takingAmount: "9000000" },
      },
    );
    const executed = await api("POST", "/trigger/v1/execute", {
      requestId: created.requestId,
      signedTransaction: Buffer.from(signBase64(created.transaction, taker).serialize()).toString("base64"),
    });
    expect(executed).toMatchObject({ status: "Success" });
    expect(await tokenBalance(stranger, keep)).toBe(strangerKeepBefore + 20_000_000n);
    expect(await tokenBalance(taker.publicKey, keep)).toBe(keepBefore - 20_000_000n);
    expect(await tokenBalance(new PublicKey(created.order), keep), "the order's escrow got nothing").toBe(0n);
  });
});
