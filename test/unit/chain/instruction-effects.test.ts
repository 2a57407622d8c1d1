import {
  AuthorityType,
  createApproveCheckedInstruction,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createAssociatedTokenAccountInstruction,
  createBurnCheckedInstruction,
  createBurnInstruction,
  createCloseAccountInstruction,
  createFreezeAccountInstruction,
  createInitializeAccount2Instruction,
  createInitializeAccount3Instruction,
  createInitializeAccountInstruction,
  createInitializeImmutableOwnerInstruction,
  createMintToCheckedInstruction,
  createMintToInstruction,
  createRecoverNestedInstruction,
  createRevokeInstruction,
  createSetAuthorityInstruction,
  createSyncNativeInstruction,
  createThawAccountInstruction,
  createTransferCheckedInstruction,
  createTransferInstruction,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, NONCE_ACCOUNT_LENGTH, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { innerEffect, rawEffect } from "../../../src/chain/instruction-effects.js";
import { ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";

/**
 * How raw and jsonParsed instructions are read into effects: the operation, the accounts by role and
 * the amounts the rules add up. A role or an amount read wrong is an outflow the rules cannot see.
 */
const key = () => Keypair.generate().publicKey;
const [a, b, c, d] = [key(), key(), key(), key()];
const s = (k: { toBase58(): string }) => k.toBase58();

function raw(ix: TransactionInstruction, where = "0") {
  return rawEffect(
    where,
    ix.programId.toBase58(),
    ix.keys.map((k) => k.pubkey.toBase58()),
    ix.data,
  );
}

describe("raw System instructions", () => {
  it("reads a transfer's accounts and lamports", () => {
    const ix = SystemProgram.transfer({ fromPubkey: a, toPubkey: b, lamports: 1_234_567 });
    expect(raw(ix, "2")).toEqual({
      where: "2",
      programId: SYSTEM_PROGRAM,
      op: "transfer",
      roles: { source: s(a), destination: s(b) },
      accounts: [s(a), s(b)],
      lamports: 1_234_567n,
    });
  });

  it("reads a transfer with seed: the seed's base is a source of the wallet's lamports too", () => {
    const ix = SystemProgram.transfer({
      fromPubkey: a,
      basePubkey: b,
      seed: "seed",
      programId: c,
      toPubkey: d,
      lamports: 77,
    });
    expect(raw(ix)).toMatchObject({
      op: "transferWithSeed",
      roles: { source: s(a), sourceBase: s(b), destination: s(d) },
      lamports: 77n,
    });
  });

  it.each([
    ["a short seed", "x"],
    ["a long seed", "a-seed-of-thirty-two-characters!"],
  ])("reads the lamports of createAccountWithSeed after %s", (_name, seed) => {
    const ix = SystemProgram.createAccountWithSeed({
      fromPubkey: a,
      newAccountPubkey: b,
      basePubkey: c,
      seed,
      lamports: 987_654_321,
      space: 10,
      programId: d,
    });
    expect(raw(ix)).toEqual({
      where: "0",
      programId: SYSTEM_PROGRAM,
      op: "createAccountWithSeed",
      roles: { source: s(a), newAccount: s(b), base: s(c) },
      accounts: [s(a), s(b), s(c)],
      lamports: 987_654_321n,
    });
  });

  it("reads no lamports from a createAccountWithSeed whose seed length runs past the data", () => {
    const data = Buffer.alloc(60);
    data.writeUInt32LE(3, 0);
    data.writeBigUInt64LE(500n, 36); // a seed of 500 bytes that is not there
    const effect = rawEffect("0", SYSTEM_PROGRAM, [s(a), s(b), s(c)], data);
    expect(effect.op).toBe("createAccountWithSeed");
    expect(effect.lamports).toBeUndefined();
  });

  it("does not take a seed length of 1024 or more as an offset", () => {
    const data = Buffer.alloc(44 + 1024 + 8);
    data.writeUInt32LE(3, 0);
    data.writeBigUInt64LE(1024n, 36);
    data.writeBigUInt64LE(9n, 44 + 1024);
    expect(rawEffect("0", SYSTEM_PROGRAM, [s(a), s(b)], data).lamports).toBeUndefined();
    data.writeBigUInt64LE(1023n, 36);
    data.writeBigUInt64LE(9n, 44 + 1023);
    expect(rawEffect("0", SYSTEM_PROGRAM, [s(a), s(b)], data).lamports).toBe(9n);
  });

  it("reads a nonce withdrawal's destination and lamports", () => {
    const ix = SystemProgram.nonceWithdraw({
      noncePubkey: a,
      authorizedPubkey: b,
      toPubkey: c,
      lamports: NONCE_ACCOUNT_LENGTH,
    });
    expect(raw(ix)).toMatchObject({
      op: "withdrawFromNonce",
      roles: { nonceAccount: s(a), destination: s(c) },
      lamports: BigInt(NONCE_ACCOUNT_LENGTH),
    });
  });

  it("leaves an instruction it cannot read as unknown, with its accounts for the rules on unknown ones", () => {
    expect(rawEffect("1", SYSTEM_PROGRAM, [s(a)], Uint8Array.from([2, 0, 0]))).toEqual({
      where: "1",
      programId: SYSTEM_PROGRAM,
      op: "unknown",
      roles: {},
      accounts: [s(a)],
    });
    expect(rawEffect("1", SYSTEM_PROGRAM, [s(a)], Uint8Array.from([99, 0, 0, 0])).op).toBe("unknown");
    const program = s(key());
    expect(rawEffect("1", program, [s(a)], Uint8Array.from([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]))).toEqual({
      where: "1",
      programId: program,
      op: "unknown",
      roles: {},
      accounts: [s(a)],
    });
  });

  it("reads a transfer cut short: its accounts by role, no lamports", () => {
    const effect = rawEffect("0", SYSTEM_PROGRAM, [s(a)], Uint8Array.from([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    expect(effect).toEqual({
      where: "0",
      programId: SYSTEM_PROGRAM,
      op: "transfer",
      roles: { source: s(a) },
      accounts: [s(a)],
    });
  });
});

describe("raw token instructions", () => {
  it.each([TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID])("reads a transferChecked under %s", (programId) => {
    const ix = createTransferCheckedInstruction(a, b, c, d, 2n ** 63n + 5n, 6, [], programId);
    expect(raw(ix)).toEqual({
      where: "0",
      programId: programId.toBase58(),
      op: "transferChecked",
      roles: { source: s(a), mint: s(b), destination: s(c), authority: s(d) },
      accounts: [s(a), s(b), s(c), s(d)],
      amount: 2n ** 63n + 5n,
    });
  });

  it.each([
    ["initializeAccount2", createInitializeAccount2Instruction],
    ["initializeAccount3", createInitializeAccount3Instruction],
  ] as const)("reads the owner of %s from its data", (op, build) => {
    expect(raw(build(a, b, c))).toMatchObject({ op, roles: { account: s(a), mint: s(b), owner: s(c) } });
  });

  it("reads the new authority of a setAuthority, and none when it is removed", () => {
    const set = createSetAuthorityInstruction(a, b, AuthorityType.CloseAccount, c);
    expect(raw(set)).toEqual({
      where: "0",
      programId: TOKEN_PROGRAM,
      op: "setAuthority",
      roles: { account: s(a), authority: s(b), newAuthority: s(c) },
      accounts: [s(a), s(b)],
    });
    const removed = createSetAuthorityInstruction(a, b, AuthorityType.CloseAccount, null);
    expect(raw(removed).roles).toEqual({ account: s(a), authority: s(b) });
  });

  it("names an unknown token instruction by its tag, and an empty one as unknown", () => {
    expect(rawEffect("0", TOKEN_PROGRAM, [s(a)], Uint8Array.from([25, 1]))).toEqual({
      where: "0",
      programId: TOKEN_PROGRAM,
      op: "unknown-25",
      roles: {},
      accounts: [s(a)],
    });
    expect(rawEffect("0", TOKEN_PROGRAM, [s(a)], new Uint8Array()).op).toBe("unknown");
  });
});

describe("raw associated token account instructions", () => {
  const ata = [s(a), s(b), s(c), s(d), SYSTEM_PROGRAM, TOKEN_PROGRAM];
  it("reads create (no data) and createIdempotent (one byte) with the owner as `wallet`", () => {
    expect(raw(createAssociatedTokenAccountInstruction(a, b, c, d))).toEqual({
      where: "0",
      programId: ASSOCIATED_TOKEN_PROGRAM,
      op: "create",
      roles: {
        source: s(a),
        account: s(b),
        wallet: s(c),
        mint: s(d),
        systemProgram: SYSTEM_PROGRAM,
        tokenProgram: TOKEN_PROGRAM,
      },
      accounts: ata,
    });
    expect(raw(createAssociatedTokenAccountIdempotentInstruction(a, b, c, d)).op).toBe("createIdempotent");
  });

  it("reads recoverNested, and leaves other data unknown", () => {
    const ix = createRecoverNestedInstruction(a, b, c, d, key(), key());
    expect(raw(ix)).toMatchObject({ op: "recoverNested", roles: { nestedSource: s(a), destination: s(c) } });
    expect(rawEffect("0", ASSOCIATED_TOKEN_PROGRAM, ata, Uint8Array.from([3])).op).toBe("unknown");
    expect(rawEffect("0", ASSOCIATED_TOKEN_PROGRAM, ata, Uint8Array.from([1, 0])).op).toBe("unknown");
  });
});

describe("inner instructions", () => {
  it("reads raw inner data as base58, and data that is not base58 as no data", () => {
    const ix = SystemProgram.transfer({ fromPubkey: a, toPubkey: b, lamports: 5 });
    const inner = innerEffect("3.1", {
      programId: SYSTEM_PROGRAM,
      accounts: [a, s(b)],
      data: bs58.encode(ix.data),
    });
    expect(inner).toEqual({
      where: "3.1",
      programId: SYSTEM_PROGRAM,
      op: "transfer",
      roles: { source: s(a), destination: s(b) },
      accounts: [s(a), s(b)],
      lamports: 5n,
    });
    expect(innerEffect("0.0", { programId: SYSTEM_PROGRAM, accounts: [a], data: "0OIl" }).op).toBe("unknown");
  });

  it("reads jsonParsed roles (string values of known keys only) and the amount", () => {
    const effect = innerEffect("1.2", {
      programId: TOKEN_PROGRAM_ID,
      program: "spl-token",
      parsed: {
        type: "transferChecked",
        info: {
          source: s(a),
          destination: s(b),
          authority: s(c),
          mint: s(d),
          decimals: 6,
          extra: s(key()),
          owner: 5,
          tokenAmount: { amount: "123456789012", decimals: 6, uiAmount: 123456.789012 },
        },
      },
    });
    expect(effect).toEqual({
      where: "1.2",
      programId: TOKEN_PROGRAM,
      op: "transferChecked",
      roles: { source: s(a), destination: s(b), authority: s(c), mint: s(d) },
      accounts: [s(a), s(b), s(c), s(d)],
      amount: 123_456_789_012n,
    });
  });

  it("counts a multisig authority or owner as the authority or owner, not over a named one", () => {
    const multisig = innerEffect("0.0", {
      programId: TOKEN_PROGRAM,
      parsed: {
        type: "transfer",
        info: { source: s(a), destination: s(b), multisigAuthority: s(c), amount: "10" },
      },
    });
    expect(multisig.roles).toEqual({
      source: s(a),
      destination: s(b),
      multisigAuthority: s(c),
      authority: s(c),
    });
    expect(multisig.amount).toBe(10n);
    const owner = innerEffect("0.0", {
      programId: TOKEN_PROGRAM,
      parsed: { type: "approve", info: { source: s(a), delegate: s(b), multisigOwner: s(c), owner: s(d) } },
    });
    expect(owner.roles.owner).toBe(s(d));
    const onlyMultisigOwner = innerEffect("0.0", {
      programId: TOKEN_PROGRAM,
      parsed: { type: "approve", info: { source: s(a), multisigOwner: s(c) } },
    });
    expect(onlyMultisigOwner.roles.owner).toBe(s(c));
    const named = innerEffect("0.0", {
      programId: TOKEN_PROGRAM,
      parsed: { type: "transfer", info: { authority: s(d), multisigAuthority: s(c) } },
    });
    expect(named.roles.authority).toBe(s(d));
  });

  it("reads lamports given as a number or a string; amounts only when whole digits", () => {
    const asNumber = innerEffect("0.0", {
      programId: SYSTEM_PROGRAM,
      parsed: { type: "transfer", info: { source: s(a), destination: s(b), lamports: 2_039_280 } },
    });
    expect(asNumber.lamports).toBe(2_039_280n);
    const asString = innerEffect("0.0", {
      programId: SYSTEM_PROGRAM,
      parsed: {
        type: "transfer",
        info: { source: s(a), destination: s(b), lamports: "18446744073709551615" },
      },
    });
    expect(asString.lamports).toBe(18_446_744_073_709_551_615n);
    for (const amount of ["1.5", "-3", "12abc", 42]) {
      const effect = innerEffect("0.0", {
        programId: TOKEN_PROGRAM,
        parsed: { type: "burn", info: { amount } },
      });
      expect(effect.amount).toBeUndefined();
    }
    const uiOnly = innerEffect("0.0", {
      programId: TOKEN_PROGRAM,
      parsed: { type: "burnChecked", info: { tokenAmount: { amount: "7x" } } },
    });
    expect(uiOnly.amount).toBeUndefined();
  });

  it("reads a parsed instruction without a type or info as unknown with no roles", () => {
    for (const parsed of [null, "memo text", { type: 3 }, { type: "transfer", info: "x" }]) {
      const effect = innerEffect("0.0", { programId: SYSTEM_PROGRAM, parsed });
      expect(effect.roles).toEqual({});
      expect(effect.accounts).toEqual([]);
      expect(effect.lamports).toBeUndefined();
    }
    expect(innerEffect("0.0", { programId: SYSTEM_PROGRAM, parsed: { type: 3 } }).op).toBe("unknown");
    expect(innerEffect("0.0", { programId: SYSTEM_PROGRAM, parsed: null }).op).toBe("unknown");
  });
});

describe("every operation the rules know, read from the real builders' account order", () => {
  const [e, f] = [key(), key()];
  const token = [
    ["initializeAccount", createInitializeAccountInstruction(a, b, c), ["account", "mint", "owner"]],
    ["transfer", createTransferInstruction(a, b, c, 42n), ["source", "destination", "authority"]],
    ["approve", createApproveInstruction(a, b, c, 42n), ["source", "delegate", "owner"]],
    ["revoke", createRevokeInstruction(a, b), ["source", "owner"]],
    [
      "setAuthority",
      createSetAuthorityInstruction(a, b, AuthorityType.AccountOwner, null),
      ["account", "authority"],
    ],
    ["mintTo", createMintToInstruction(a, b, c, 42n), ["mint", "account", "mintAuthority"]],
    ["burn", createBurnInstruction(a, b, c, 42n), ["account", "mint", "authority"]],
    ["closeAccount", createCloseAccountInstruction(a, b, c), ["account", "destination", "owner"]],
    ["freezeAccount", createFreezeAccountInstruction(a, b, c), ["account", "mint", "freezeAuthority"]],
    ["thawAccount", createThawAccountInstruction(a, b, c), ["account", "mint", "freezeAuthority"]],
    [
      "transferChecked",
      createTransferCheckedInstruction(a, b, c, d, 42n, 6),
      ["source", "mint", "destination", "authority"],
    ],
    [
      "approveChecked",
      createApproveCheckedInstruction(a, b, c, d, 42n, 6),
      ["source", "mint", "delegate", "owner"],
    ],
    ["mintToChecked", createMintToCheckedInstruction(a, b, c, 42n, 6), ["mint", "account", "mintAuthority"]],
    ["burnChecked", createBurnCheckedInstruction(a, b, c, 42n, 6), ["account", "mint", "authority"]],
    ["initializeAccount2", createInitializeAccount2Instruction(a, b, e), ["account", "mint"]],
    ["syncNative", createSyncNativeInstruction(a), ["account"]],
    ["initializeAccount3", createInitializeAccount3Instruction(a, b, e), ["account", "mint"]],
    ["initializeImmutableOwner", createInitializeImmutableOwnerInstruction(a, TOKEN_PROGRAM_ID), ["account"]],
  ] as const;
  const withAmount = new Set([
    "transfer",
    "approve",
    "mintTo",
    "burn",
    "transferChecked",
    "approveChecked",
    "mintToChecked",
    "burnChecked",
  ]);

  it.each(token)("token %s", (op, ix, roleNames) => {
    const effect = raw(ix);
    const accounts = ix.keys.map((k) => s(k.pubkey));
    const roles = Object.fromEntries(roleNames.map((name, i) => [name, accounts[i] as string]));
    if (op === "initializeAccount2" || op === "initializeAccount3") roles.owner = s(e);
    expect(effect.op).toBe(op);
    expect(effect.roles).toEqual(roles);
    expect(effect.amount).toBe(withAmount.has(op) ? 42n : undefined);
    expect(effect.lamports).toBeUndefined();
  });

  const upgradeNonce = new TransactionInstruction({
    programId: SystemProgram.programId,
    keys: [{ pubkey: a, isSigner: false, isWritable: true }],
    data: Buffer.from([12, 0, 0, 0]),
  });
  const systemCases = [
    [
      "createAccount",
      SystemProgram.createAccount({
        fromPubkey: a,
        newAccountPubkey: b,
        lamports: 42,
        space: 0,
        programId: f,
      }),
      ["source", "newAccount"],
      42n,
    ],
    ["assign", SystemProgram.assign({ accountPubkey: a, programId: f }), ["account"], undefined],
    [
      "transfer",
      SystemProgram.transfer({ fromPubkey: a, toPubkey: b, lamports: 42 }),
      ["source", "destination"],
      42n,
    ],
    [
      "advanceNonce",
      SystemProgram.nonceAdvance({ noncePubkey: a, authorizedPubkey: b }),
      ["nonceAccount"],
      undefined,
    ],
    [
      "withdrawFromNonce",
      SystemProgram.nonceWithdraw({ noncePubkey: a, authorizedPubkey: b, toPubkey: c, lamports: 42 }),
      ["nonceAccount", "destination"],
      42n,
    ],
    [
      "initializeNonce",
      SystemProgram.nonceInitialize({ noncePubkey: a, authorizedPubkey: b }),
      ["nonceAccount"],
      undefined,
    ],
    [
      "authorizeNonce",
      SystemProgram.nonceAuthorize({ noncePubkey: a, authorizedPubkey: b, newAuthorizedPubkey: c }),
      ["nonceAccount"],
      undefined,
    ],
    ["allocate", SystemProgram.allocate({ accountPubkey: a, space: 8 }), ["account"], undefined],
    [
      "allocateWithSeed",
      SystemProgram.allocate({ accountPubkey: a, basePubkey: b, seed: "s", space: 8, programId: f }),
      ["account", "base"],
      undefined,
    ],
    [
      "assignWithSeed",
      SystemProgram.assign({ accountPubkey: a, basePubkey: b, seed: "s", programId: f }),
      ["account", "base"],
      undefined,
    ],
    [
      "transferWithSeed",
      SystemProgram.transfer({
        fromPubkey: a,
        basePubkey: b,
        toPubkey: c,
        lamports: 42,
        seed: "s",
        programId: f,
      }),
      ["source", "sourceBase", "destination"],
      42n,
    ],
    ["upgradeNonce", upgradeNonce, ["nonceAccount"], undefined],
  ] as const;

  it.each(systemCases)("System %s", (op, ix, roleNames, lamports) => {
    const effect = raw(ix);
    const accounts = ix.keys.map((k) => s(k.pubkey));
    expect(effect.op).toBe(op);
    expect(effect.roles).toEqual(Object.fromEntries(roleNames.map((name, i) => [name, accounts[i]])));
    expect(effect.lamports).toBe(lamports);
    expect(effect.amount).toBeUndefined();
  });
});
