import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { associatedAddress } from "../../../../src/sandbox/chain/associated-address.js";

describe("the sandbox's remembered associated token addresses", () => {
  const mint = Keypair.generate().publicKey;
  const owner = Keypair.generate().publicKey;

  it("are the addresses spl-token derives, for either token program", () => {
    expect(associatedAddress(mint, owner).toBase58()).toBe(
      getAssociatedTokenAddressSync(mint, owner).toBase58(),
    );
    expect(associatedAddress(mint, owner, TOKEN_2022_PROGRAM_ID).toBase58()).toBe(
      getAssociatedTokenAddressSync(mint, owner, false, TOKEN_2022_PROGRAM_ID).toBase58(),
    );
    expect(associatedAddress(mint, owner, TOKEN_2022_PROGRAM_ID).toBase58()).not.toBe(
      associatedAddress(mint, owner, TOKEN_PROGRAM_ID).toBase58(),
    );
  });

  it("allow an owner off the curve (a program's address), and are derived once", () => {
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from("pool")], TOKEN_PROGRAM_ID);
    const first = associatedAddress(mint, pda);
    expect(first.toBase58()).toBe(getAssociatedTokenAddressSync(mint, pda, true).toBase58());
    expect(associatedAddress(new PublicKey(mint.toBytes()), new PublicKey(pda.toBytes()))).toBe(first);
  });
});
