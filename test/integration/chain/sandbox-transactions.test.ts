import { AccountLayout, getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningLocalChain, startLocalChain } from "../../../src/sandbox/chain/index.js";
import type { LandedEvent } from "../../../src/sandbox/chain/local-chain.js";
import { poolPayoutInstruction } from "../../../src/sandbox/chain/pool-program.js";
import { orderAddress } from "../../../src/sandbox/world/order-address.js";
import { waitFor } from "./chain-harness.js";

let run: RunningLocalChain;
let connection: Connection;
beforeEach(async () => {
  run = await startLocalChain({ seed: 42, port: 0, slotMs: 25 });
  connection = new Connection(run.url, "confirmed");
});
afterEach(async () => {
  await run.close();
});

async function landed(signature: string) {
  return waitFor(async () => {
    const { value } = await connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
    return value[0] ?? undefined;
  }, `landing of ${signature}`);
}

describe("sandbox transactions on the local chain", () => {
  it("derives the same assets from the same seed", async () => {
    const again = await startLocalChain({ seed: 42, port: 0, slotMs: 0 });
    try {
      expect(again.assets.usdcMint.toBase58()).toBe(run.assets.usdcMint.toBase58());
      expect(again.assets.vault.publicKey.toBase58()).toBe(run.assets.vault.publicKey.toBase58());
      const specs = [{ symbol: "KEEP", decimals: 9, seedLabel: "keep" }];
      expect(again.assets.createTokenMints(specs).KEEP?.toBase58()).toBe(
        run.assets.createTokenMints(specs).KEEP?.toBase58(),
      );
    } finally {
      await again.close();
    }
  });

  it("reads an account through LiteSVM's native side as its wrapper reads it", () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1, usdc: 5_000_000n });
    const ata = getAssociatedTokenAddressSync(run.assets.usdcMint, owner.publicKey);
    for (const address of [owner.publicKey, ata, run.assets.usdcMint]) {
      const ours = run.chain.getAccount(address);
      const theirs = run.chain.svm.getAccount(
        address.toBase58() as Parameters<typeof run.chain.svm.getAccount>[0],
      );
      if (!theirs.exists) throw new Error(`${address.toBase58()} should exist`);
      expect(ours?.lamports).toBe(BigInt(theirs.lamports));
      expect(ours?.owner.toBase58()).toBe(theirs.programAddress);
      expect(Buffer.from(ours?.data ?? [])).toEqual(Buffer.from(theirs.data));
      expect(ours?.executable).toBe(theirs.executable);
    }
    expect(run.chain.getAccount(Keypair.generate().publicKey)).toBeNull();
  });

  it("a claim, partially signed by the vault and signed by the owner, lands and pays the owner", async () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const position = Keypair.generate().publicKey;
    const events: LandedEvent[] = [];
    run.chain.onLanded((event) => events.push(event));
    const vaultBefore = run.chain.tokenBalance(run.assets.vault.publicKey, run.assets.usdcMint);

    const built = run.txFactory.buildClaim({
      owner: owner.publicKey,
      positionPubkey: position,
      payoutRaw: 2_500_000n,
    });
    const tx = VersionedTransaction.deserialize(Buffer.from(built.transaction, "base64"));
    expect(tx.message.recentBlockhash).toBe(built.txMeta.blockhash);
    tx.sign([owner]);
    const vaultIndex = tx.message.staticAccountKeys.findIndex((key) =>
      key.equals(run.assets.vault.publicKey),
    );
    expect(vaultIndex).toBeGreaterThan(0);
    const vaultSignature = Buffer.from(tx.signatures[vaultIndex] ?? []).toString("hex");

    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    expect(run.chain.tokenBalance(owner.publicKey, run.assets.usdcMint)).toBe(2_500_000n);
    expect(run.chain.tokenBalance(run.assets.vault.publicKey, run.assets.usdcMint)).toBe(
      vaultBefore - 2_500_000n,
    );

    const history = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(history?.transaction.signatures[vaultIndex]).toBeDefined();
    const stored = run.chain.transaction(signature);
    expect(Buffer.from(stored?.transaction.signatures[vaultIndex] ?? []).toString("hex")).toBe(
      vaultSignature,
    );
    expect(
      history?.meta?.postTokenBalances?.some(
        (b) => b.owner === owner.publicKey.toBase58() && b.uiTokenAmount.amount === "2500000",
      ),
    ).toBe(true);

    const event = await waitFor(() => events.find((e) => e.signature === signature), "onLanded");
    expect(event.err).toBeNull();
    expect(event.memos).toEqual([`keeper-sandbox:claim:${position.toBase58()}`]);
  });

  it("a claim signed by the owner only is not enough without the vault's signature", async () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const built = run.txFactory.buildClaim({
      owner: owner.publicKey,
      positionPubkey: Keypair.generate().publicKey,
      payoutRaw: 1n,
    });
    const tx = VersionedTransaction.deserialize(Buffer.from(built.transaction, "base64"));
    tx.sign([owner]);
    const vaultIndex = tx.message.staticAccountKeys.findIndex((key) =>
      key.equals(run.assets.vault.publicKey),
    );
    tx.signatures[vaultIndex] = new Uint8Array(64);
    await expect(connection.sendRawTransaction(tx.serialize())).rejects.toThrow(/signature verification/);
  });

  it("a close (legacy) goes through submitSigned and reports the outcome", async () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const position = Keypair.generate().publicKey;
    const built = run.txFactory.buildClose({
      owner: owner.publicKey,
      positionPubkey: position,
      proceedsRaw: 777n,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
    tx.partialSign(owner);
    const outcome = await run.txFactory.submitSigned(tx.serialize().toString("base64"));
    expect(outcome.err).toBeNull();
    expect(outcome.signature).toBe(bs58.encode(tx.signature ?? new Uint8Array()));
    expect(run.chain.tokenBalance(owner.publicKey, run.assets.usdcMint)).toBe(777n);
    expect(run.chain.transaction(outcome.signature)?.err).toBeNull();
  });

  it("getSignaturesForAddress lists an address's landed transactions, newest first, within the limit", async () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const signatures: string[] = [];
    for (const proceedsRaw of [1n, 2n]) {
      const built = run.txFactory.buildClose({
        owner: owner.publicKey,
        positionPubkey: Keypair.generate().publicKey,
        proceedsRaw,
      });
      const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
      tx.partialSign(owner);
      signatures.push((await run.txFactory.submitSigned(tx.serialize().toString("base64"))).signature);
    }
    const listed = await connection.getSignaturesForAddress(owner.publicKey);
    expect(listed.map((entry) => entry.signature)).toEqual([...signatures].reverse());
    expect(listed[0]).toMatchObject({ err: null, slot: run.chain.transaction(signatures[1] ?? "")?.slot });
    const newest = await connection.getSignaturesForAddress(owner.publicKey, { limit: 1 });
    expect(newest.map((entry) => entry.signature)).toEqual([signatures[1]]);
    expect(await connection.getSignaturesForAddress(Keypair.generate().publicKey)).toEqual([]);
    // Paging is not supported: refused, never ignored.
    await expect(
      connection.getSignaturesForAddress(owner.publicKey, { before: signatures[1] ?? "" }),
    ).rejects.toThrow(/before\/until are not supported/);
  });

  it("submitSigned rebroadcasts past dropped sends", async () => {
    run.chain.dropFirstSends(1);
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const built = run.txFactory.buildClose({
      owner: owner.publicKey,
      positionPubkey: Keypair.generate().publicKey,
      proceedsRaw: 5n,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
    tx.partialSign(owner);
    const outcome = await run.txFactory.submitSigned(tx.serialize().toString("base64"));
    expect(outcome.err).toBeNull();
    expect(run.chain.tokenBalance(owner.publicKey, run.assets.usdcMint)).toBe(5n);
  });

  it("an order escrow and its trigger cancel move the maker's tokens there and back", async () => {
    const maker = Keypair.generate();
    run.assets.fundWallet(maker.publicKey, { sol: 1, usdc: 50_000_000n });
    const order = new PublicKey(orderAddress("trigger", "trg-escrow-test"));
    const usdc = run.assets.usdcMint;
    const escrowBuilt = await run.port.buildOrderEscrow({
      kind: "trigger",
      maker: maker.publicKey,
      inputMint: usdc,
      amountRaw: 20_000_000n,
      orderRef: order.toBase58(),
    });
    const escrowTx = VersionedTransaction.deserialize(Buffer.from(escrowBuilt.transaction, "base64"));
    escrowTx.sign([maker]);
    expect(
      (await run.port.submitSigned(Buffer.from(escrowTx.serialize()).toString("base64"))).err,
    ).toBeNull();
    expect(run.chain.tokenBalance(maker.publicKey, usdc)).toBe(30_000_000n);
    expect(run.chain.tokenBalance(order, usdc)).toBe(20_000_000n);
    // Landed: the service's escrow delegate may move the deposit (the order's PDA cannot sign).
    const escrow = AccountLayout.decode(
      run.chain.getAccount(getAssociatedTokenAddressSync(usdc, order, true))?.data ?? new Uint8Array(165),
    );
    expect(escrow.owner.toBase58()).toBe(order.toBase58());
    expect(escrow.delegate.toBase58()).toBe(run.assets.escrowDelegate.publicKey.toBase58());
    expect(escrow.delegatedAmount).toBe(20_000_000n);

    const cancelBuilt = await run.port.buildTriggerCancel({ maker: maker.publicKey, order });
    const cancelTx = Transaction.from(Buffer.from(cancelBuilt.transaction, "base64"));
    cancelTx.partialSign(maker);
    const memos: string[] = [];
    run.port.onLanded((e) => memos.push(...e.memos));
    expect((await run.port.submitSigned(cancelTx.serialize().toString("base64"))).err).toBeNull();
    expect(run.chain.tokenBalance(maker.publicKey, usdc)).toBe(50_000_000n);
    expect(run.chain.tokenBalance(order, usdc)).toBe(0n);
    expect(memos).toContain(`keeper-sandbox:trigger-cancel:${order.toBase58()}`);
  });

  it("swap legs: the taker's input lands in the pool (a PDA's account), which pays the output in the same transaction", async () => {
    const taker = Keypair.generate();
    run.assets.fundWallet(taker.publicKey, { sol: 1, usdc: 10_000_000n });
    const keep = run.assets.createTokenMints([{ symbol: "KEEP", decimals: 9, seedLabel: "keep" }])
      .KEEP as PublicKey;
    const legs = await run.port.buildSwapLegs({
      taker: taker.publicKey,
      inputMint: run.assets.usdcMint,
      outputMint: keep,
      inAmountRaw: 4_000_000n,
      outAmountRaw: 123_000_000_000n,
      ref: "swap-1",
    });
    const message = new TransactionMessage({
      payerKey: taker.publicKey,
      recentBlockhash: new PublicKey(legs.blockhash).toBase58(),
      instructions: [...legs.setupInstructions, legs.swapInstruction, ...legs.otherInstructions],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([taker]);
    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    expect(run.chain.tokenBalance(taker.publicKey, run.assets.usdcMint)).toBe(6_000_000n);
    expect(PublicKey.isOnCurve(run.assets.pool.toBytes())).toBe(false);
    const poolUsdcBefore = 10_000_000n * 1_000_000n; // the pool's genesis USDC
    expect(run.chain.tokenBalance(run.assets.pool, run.assets.usdcMint)).toBe(poolUsdcBefore + 4_000_000n);
    expect(run.chain.tokenBalance(taker.publicKey, keep)).toBe(123_000_000_000n);
  });

  it("the pool program moves only the pool's accounts, and refuses an account named twice", async () => {
    const user = Keypair.generate();
    run.assets.fundWallet(user.publicKey, { sol: 1, usdc: 5_000_000n });
    const usdc = run.assets.usdcMint;
    const userAccount = getAssociatedTokenAddressSync(usdc, user.publicKey);
    const poolAccount = getAssociatedTokenAddressSync(usdc, run.assets.pool, true);
    const payout = (source: PublicKey, destination: PublicKey) =>
      poolPayoutInstruction({
        programId: run.assets.poolProgram,
        pool: run.assets.pool,
        bump: run.assets.poolBump,
        source,
        mint: usdc,
        destination,
        amountRaw: 1_000_000n,
        decimals: 6,
      });
    const send = async (payer: Keypair, ix: TransactionInstruction) => {
      const built = run.txFactory.build(payer.publicKey, [ix], [], "legacy");
      const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
      tx.sign(payer);
      return run.txFactory.submitSigned(tx.serialize().toString("base64"));
    };
    const poolBefore = run.chain.tokenBalance(run.assets.pool, usdc);
    // Another's account: the pool's PDA is not its owner, so the Token program refuses.
    const stranger = Keypair.generate();
    run.assets.fundWallet(stranger.publicKey, { sol: 1 });
    expect((await send(stranger, payout(userAccount, poolAccount))).err).not.toBeNull();
    expect(run.chain.tokenBalance(user.publicKey, usdc)).toBe(5_000_000n);
    // The same account as source and destination: the program's own refusal (custom error 1).
    expect((await send(user, payout(poolAccount, poolAccount))).err).toEqual({
      InstructionError: [1, { Custom: 1 }],
    });
    expect(run.chain.tokenBalance(run.assets.pool, usdc)).toBe(poolBefore);
    // Its own account: paid.
    expect((await send(user, payout(poolAccount, userAccount))).err).toBeNull();
    expect(run.chain.tokenBalance(user.publicKey, usdc)).toBe(6_000_000n);
  });

  it("a v0 transaction using an address lookup table lands", async () => {
    const payer = Keypair.generate();
    run.assets.fundWallet(payer.publicKey, { sol: 5 });
    const recipients = [
      Keypair.generate().publicKey,
      Keypair.generate().publicKey,
      Keypair.generate().publicKey,
    ];
    const tableAddress = run.chain.createLookupTable(recipients);
    const table = (await connection.getAddressLookupTable(tableAddress)).value;
    expect(table?.state.addresses.map((a) => a.toBase58())).toEqual(recipients.map((a) => a.toBase58()));
    if (table === null) throw new Error("no table");

    const { blockhash } = await connection.getLatestBlockhash();
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: recipients.map((to) =>
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }),
      ),
    }).compileToV0Message([table]);
    expect(message.addressTableLookups).toHaveLength(1);
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    const signature = await connection.sendRawTransaction(tx.serialize());
    expect((await landed(signature)).err).toBeNull();
    for (const to of recipients) expect(await connection.getBalance(to)).toBe(LAMPORTS_PER_SOL);
    const history = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(history?.version).toBe(0);
    expect(history?.meta?.loadedAddresses?.writable.map((a) => a.toBase58())).toEqual(
      recipients.map((a) => a.toBase58()),
    );
    // Without maxSupportedTransactionVersion a node refuses to return a v0 transaction.
    await expect(connection.getTransaction(signature)).rejects.toThrow(/maxSupportedTransactionVersion/);
  });

  it("getFeeForMessage matches what the payer is charged with a priority price", async () => {
    const owner = Keypair.generate();
    run.assets.fundWallet(owner.publicKey, { sol: 1 });
    const built = run.txFactory.buildClose({
      owner: owner.publicKey,
      positionPubkey: Keypair.generate().publicKey,
      proceedsRaw: 1n,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
    const quoted = (await connection.getFeeForMessage(tx.compileMessage())).value;
    tx.partialSign(owner);
    const signature = await connection.sendRawTransaction(tx.serialize());
    await landed(signature);
    const history = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(history?.meta?.fee).toBe(quoted);
    const rent = await connection.getMinimumBalanceForRentExemption(165);
    // The owner paid the fee and the rent of its new USDC account, nothing else.
    expect(LAMPORTS_PER_SOL - (await connection.getBalance(owner.publicKey))).toBe((quoted ?? 0) + rent);
    expect(quoted).toBeGreaterThan(2 * 5_000);
  });
});
