import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, SystemProgram, Transaction } from "@solana/web3.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fundedKeypair, type Harness, startHarness } from "./chain-harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("token accounts and simulation", () => {
  it("answers getTokenAccountBalance and getTokenAccountsByOwner by mint and by program", async () => {
    const owner = Keypair.generate().publicKey;
    const mintA = h.chain.createMint({ address: Keypair.generate(), decimals: 6, authority: owner });
    const mintB = h.chain.createMint({ address: Keypair.generate(), decimals: 9, authority: owner });
    const ataA = h.chain.mintTo(mintA, owner, 12_340_000n);
    h.chain.mintTo(mintB, owner, 5n);
    expect(h.chain.tokenBalance(owner, mintA)).toBe(12_340_000n);

    const balance = await h.connection.getTokenAccountBalance(ataA);
    expect(balance.value).toMatchObject({
      amount: "12340000",
      decimals: 6,
      uiAmountString: "12.34",
      uiAmount: 12.34,
    });

    const byMint = await h.connection.getTokenAccountsByOwner(owner, { mint: mintA });
    expect(byMint.value.map((entry) => entry.pubkey.toBase58())).toEqual([ataA.toBase58()]);
    expect(byMint.value[0]?.account.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    const byProgram = await h.connection.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ID });
    expect(byProgram.value).toHaveLength(2);
    const parsed = await h.connection.getParsedTokenAccountsByOwner(owner, { mint: mintB });
    expect(parsed.value[0]?.account.data.parsed.info.tokenAmount.amount).toBe("5");

    const infos = await h.connection.getMultipleAccountsInfo([ataA, Keypair.generate().publicKey]);
    expect(infos[0]?.data.length).toBe(165);
    expect(infos[1]).toBeNull();
  });

  it("simulates without changing state and returns post accounts and inner instructions", async () => {
    const payer = fundedKeypair(h.chain);
    const mint = h.chain.createMint({ address: Keypair.generate(), decimals: 6, authority: payer.publicKey });
    const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
    const { blockhash, lastValidBlockHeight } = await h.connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
    );
    tx.sign(payer);

    const sim = await h.connection.simulateTransaction(tx, undefined, [ata, payer.publicKey]);
    expect(sim.value.err).toBeNull();
    expect(sim.value.unitsConsumed).toBeGreaterThan(0);
    expect(sim.value.logs?.some((line) => line.includes(ASSOCIATED_TOKEN_PROGRAM_ID.toBase58()))).toBe(true);
    const [ataAfter, payerAfter] = sim.value.accounts ?? [];
    expect(ataAfter?.owner).toBe(TOKEN_PROGRAM_ID.toBase58());
    expect(Buffer.from(ataAfter?.data[0] ?? "", "base64").length).toBe(165);
    expect(payerAfter?.lamports).toBeLessThan(await h.connection.getBalance(payer.publicKey));
    // Simulation changed nothing.
    expect(await h.connection.getAccountInfo(ata)).toBeNull();

    // Raw request for innerInstructions: the ATA program calls System and Token.
    const response = await fetch(h.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "simulateTransaction",
        params: [
          tx.serialize().toString("base64"),
          {
            encoding: "base64",
            sigVerify: true,
            innerInstructions: true,
            accounts: { addresses: [ata.toBase58()], encoding: "base64" },
          },
        ],
      }),
    });
    const body = (await response.json()) as {
      result: {
        context: { slot: number };
        value: {
          innerInstructions: {
            index: number;
            instructions: { programId: string; accounts: string[]; data: string; stackHeight: number }[];
          }[];
        };
      };
    };
    expect(body.result.context.slot).toBeGreaterThan(0);
    const [group] = body.result.value.innerInstructions;
    expect(group?.index).toBe(0);
    const programs = new Set(group?.instructions.map((ix) => ix.programId));
    expect(programs.has(SystemProgram.programId.toBase58())).toBe(true);
    expect(programs.has(TOKEN_PROGRAM_ID.toBase58())).toBe(true);
    expect(group?.instructions.every((ix) => ix.stackHeight === 2)).toBe(true);
  });

  it("web3.js parses simulateTransaction with innerInstructions and sigVerify off on an unsigned transaction", async () => {
    const payer = fundedKeypair(h.chain);
    const mint = h.chain.createMint({ address: Keypair.generate(), decimals: 6, authority: payer.publicKey });
    const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
    const { blockhash } = await h.connection.getLatestBlockhash();
    const { TransactionMessage, VersionedTransaction } = await import("@solana/web3.js");
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
      ],
    }).compileToV0Message();
    const unsigned = new VersionedTransaction(message);
    const sim = await h.connection.simulateTransaction(unsigned, {
      sigVerify: false,
      innerInstructions: true,
      accounts: { encoding: "base64", addresses: [ata.toBase58()] },
    });
    expect(sim.value.err).toBeNull();
    expect(sim.value.innerInstructions?.[0]?.instructions.length).toBeGreaterThan(0);
    expect(sim.value.accounts?.[0]?.owner).toBe(TOKEN_PROGRAM_ID.toBase58());
    // With signatures checked, the same unsigned transaction fails.
    const checked = await h.connection.simulateTransaction(unsigned, { sigVerify: true });
    expect(checked.value.err).toBe("SignatureFailure");
  });
});
