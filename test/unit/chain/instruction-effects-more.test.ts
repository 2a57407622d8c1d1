import {
  AuthorityType,
  createAssociatedTokenAccountIdempotentInstruction,
  createAssociatedTokenAccountInstruction,
  createRecoverNestedInstruction,
  createSetAuthorityInstruction,
} from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { innerEffect, rawEffect } from "../../../src/chain/instruction-effects.js";
import { ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";

const key = () => Keypair.generate().publicKey.toBase58();
const wallet = key();

describe("jsonParsed roles", () => {
  // Every role an RPC's jsonParsed output names accounts by: a wallet named under any of them is among
  // the effect's accounts, which the rules on unknown operations check.
  it.each([
    "source",
    "destination",
    "authority",
    "multisigAuthority",
    "owner",
    "multisigOwner",
    "delegate",
    "account",
    "mint",
    "newAccount",
    "base",
    "sourceBase",
    "nonceAccount",
    "newAuthority",
    "mintAuthority",
    "freezeAuthority",
    "closeAuthority",
    "wallet",
    "tokenProgram",
  ])("keeps an account named as %s", (role) => {
    const effect = innerEffect("2.0", {
      programId: TOKEN_PROGRAM,
      parsed: { type: "someNewOp", info: { [role]: wallet } },
    });
    expect(effect.roles[role]).toBe(wallet);
    expect(effect.accounts).toContain(wallet);
  });

  it("reads a tokenAmount only when its amount is a string of whole digits", () => {
    for (const amount of [42, "x7", "7x", ""]) {
      const effect = innerEffect("0.0", {
        programId: TOKEN_PROGRAM,
        parsed: { type: "burnChecked", info: { tokenAmount: { amount } } },
      });
      expect(effect.amount).toBeUndefined();
    }
  });
});

describe("raw token data shorter than the builders make", () => {
  it("reads no owner from an initializeAccount2 or 3 without the owner's 32 bytes", () => {
    const [account, mint] = [key(), key()];
    for (const tag of [16, 18]) {
      const effect = rawEffect(
        "0",
        TOKEN_PROGRAM,
        [account, mint],
        Uint8Array.from([tag, ...new Uint8Array(31)]),
      );
      expect(effect.roles).toEqual({ account, mint });
    }
  });

  it("reads no new authority from a setAuthority whose new authority is cut short", () => {
    const [account, authority] = [key(), key()];
    const full = createSetAuthorityInstruction(
      new PublicKey(account),
      new PublicKey(authority),
      AuthorityType.CloseAccount,
      new PublicKey(wallet),
    ).data;
    const short = rawEffect("0", TOKEN_PROGRAM, [account, authority], full.subarray(0, 34));
    expect(short.roles).toEqual({ account, authority });
  });
});

describe("raw associated token account creation", () => {
  it("names createIdempotent's accounts as create's", () => {
    const [payer, account, owner, mint] = [key(), key(), key(), key()].map((k) => new PublicKey(k)) as [
      PublicKey,
      PublicKey,
      PublicKey,
      PublicKey,
    ];
    const read = (ix: { keys: { pubkey: PublicKey }[]; data: Buffer }) =>
      rawEffect(
        "0",
        ASSOCIATED_TOKEN_PROGRAM,
        ix.keys.map((k) => k.pubkey.toBase58()),
        ix.data,
      );
    const create = read(createAssociatedTokenAccountInstruction(payer, account, owner, mint));
    const idempotent = read(createAssociatedTokenAccountIdempotentInstruction(payer, account, owner, mint));
    expect(idempotent.op).toBe("createIdempotent");
    expect(idempotent.roles).toEqual(create.roles);
    expect(Object.keys(idempotent.roles)).toHaveLength(6);
  });
});

describe("raw setAuthority data", () => {
  it("gives a newAuthority role only to a setAuthority that names one", () => {
    const [account, authority] = [key(), key()];
    // A removal (option byte 0) followed by bytes that look like an address is still a removal.
    const removal = Uint8Array.from([6, 2, 0, ...new PublicKey(wallet).toBytes()]);
    expect(rawEffect("0", TOKEN_PROGRAM, [account, authority], removal).roles).toEqual({
      account,
      authority,
    });
    // Another token instruction with as many bytes names no new authority.
    const transfer = Uint8Array.from([3, 1, 1, ...new PublicKey(wallet).toBytes()]);
    expect(
      rawEffect("0", TOKEN_PROGRAM, [account, key(), authority], transfer).roles.newAuthority,
    ).toBeUndefined();
  });
});

describe("raw recoverNested", () => {
  it("names all seven accounts by the roles jsonParsed uses", () => {
    const [nestedSource, nestedMint, destination, nestedOwner, ownerMint, owner] = [
      key(),
      key(),
      key(),
      key(),
      key(),
      key(),
    ].map((k) => new PublicKey(k));
    const ix = createRecoverNestedInstruction(
      nestedSource as PublicKey,
      nestedMint as PublicKey,
      destination as PublicKey,
      nestedOwner as PublicKey,
      ownerMint as PublicKey,
      owner as PublicKey,
    );
    const effect = rawEffect(
      "0",
      ASSOCIATED_TOKEN_PROGRAM,
      ix.keys.map((k) => k.pubkey.toBase58()),
      ix.data,
    );
    expect(effect.roles).toEqual({
      nestedSource: nestedSource?.toBase58(),
      nestedMint: nestedMint?.toBase58(),
      destination: destination?.toBase58(),
      nestedOwner: nestedOwner?.toBase58(),
      ownerMint: ownerMint?.toBase58(),
      wallet: owner?.toBase58(),
      tokenProgram: TOKEN_PROGRAM,
    });
  });
});
