import { ACCOUNT_SIZE, AccountLayout, AccountState, type RawAccount } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";
import { readTokenAccount } from "../../../src/chain/token-account.js";

const mint = Keypair.generate().publicKey;
const owner = Keypair.generate().publicKey;
const delegate = Keypair.generate().publicKey;
const closer = Keypair.generate().publicKey;

/** The 165 bytes of a token account as the token programs lay them out. */
function accountBytes(overrides: Partial<RawAccount> = {}): Uint8Array {
  const raw: RawAccount = {
    mint,
    owner,
    amount: 1_234n,
    delegateOption: 0,
    delegate: PublicKey.default,
    delegatedAmount: 0n,
    state: AccountState.Initialized,
    isNativeOption: 0,
    isNative: 0n,
    closeAuthorityOption: 0,
    closeAuthority: PublicKey.default,
    ...overrides,
  };
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(raw, data);
  return data;
}

const info = (data: Uint8Array, programId = TOKEN_PROGRAM, lamports: number | bigint = 2_039_280) => ({
  owner: new PublicKey(programId),
  lamports,
  data,
});

describe("readTokenAccount", () => {
  it("reads a plain SPL Token account", () => {
    expect(readTokenAccount(info(accountBytes()))).toEqual({
      programId: TOKEN_PROGRAM,
      mint: mint.toBase58(),
      owner: owner.toBase58(),
      amount: 1_234n,
      delegatedAmount: 0n,
      lamports: 2_039_280n,
    });
  });

  it("reads the delegate, close authority, wrapped SOL and frozen state when set", () => {
    const data = accountBytes({
      delegateOption: 1,
      delegate,
      delegatedAmount: 500n,
      closeAuthorityOption: 1,
      closeAuthority: closer,
      isNativeOption: 1,
      isNative: 2_039_280n,
      state: AccountState.Frozen,
    });
    expect(readTokenAccount(info(data, TOKEN_PROGRAM, 3_000_000n))).toEqual({
      programId: TOKEN_PROGRAM,
      mint: mint.toBase58(),
      owner: owner.toBase58(),
      amount: 1_234n,
      delegate: delegate.toBase58(),
      delegatedAmount: 500n,
      closeAuthority: closer.toBase58(),
      nativeAmount: 1_234n,
      frozen: true,
      lamports: 3_000_000n,
    });
  });

  it("reads a Token-2022 account with extensions (account-type byte 2 after the base layout)", () => {
    const data = new Uint8Array(ACCOUNT_SIZE + 1 + 8);
    data.set(accountBytes());
    data[ACCOUNT_SIZE] = 2;
    const state = readTokenAccount(info(data, TOKEN_2022_PROGRAM));
    expect(state?.programId).toBe(TOKEN_2022_PROGRAM);
    expect(state?.owner).toBe(owner.toBase58());
    expect(state?.amount).toBe(1_234n);
  });

  it.each([
    { what: "no account", account: null },
    { what: "an account not read", account: undefined },
    { what: "an account of another program", account: info(accountBytes(), SYSTEM_PROGRAM) },
    {
      what: "data shorter than a token account",
      account: info(accountBytes().subarray(0, ACCOUNT_SIZE - 1)),
    },
    {
      what: "a Token-2022 mint padded past 165 bytes (account-type byte 1)",
      account: info(
        (() => {
          const data = new Uint8Array(ACCOUNT_SIZE + 1);
          data.set(accountBytes());
          data[ACCOUNT_SIZE] = 1;
          return data;
        })(),
        TOKEN_2022_PROGRAM,
      ),
    },
    { what: "an uninitialized account", account: info(accountBytes({ state: AccountState.Uninitialized })) },
  ])("answers undefined for $what", ({ account }) => {
    expect(readTokenAccount(account)).toBeUndefined();
  });

  it("reads what spl-token's own layout decodes, for any bytes and option tags, at any offset", () => {
    // The reference: spl-token's decoder, with the same rules for options (a tag of 1 is "some").
    const reference = (data: Uint8Array) => {
      const raw = AccountLayout.decode(Buffer.from(data.subarray(0, ACCOUNT_SIZE)));
      if (raw.state === AccountState.Uninitialized) return undefined;
      return {
        programId: TOKEN_PROGRAM,
        mint: raw.mint.toBase58(),
        owner: raw.owner.toBase58(),
        amount: raw.amount,
        delegatedAmount: raw.delegatedAmount,
        lamports: 7n,
        ...(raw.delegateOption === 1 ? { delegate: raw.delegate.toBase58() } : {}),
        ...(raw.closeAuthorityOption === 1 ? { closeAuthority: raw.closeAuthority.toBase58() } : {}),
        ...(raw.isNativeOption === 1 ? { nativeAmount: raw.amount } : {}),
        ...(raw.state === AccountState.Frozen ? { frozen: true } : {}),
      };
    };
    let seed = 1;
    const byte = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed >>> 16;
    };
    const tags = [0, 1, 2, 0x0100, 0xffffffff];
    for (let round = 0; round < 300; round += 1) {
      const pool = new Uint8Array(ACCOUNT_SIZE + 7);
      for (let i = 0; i < pool.length; i += 1) pool[i] = byte() & 0xff;
      const data = pool.subarray(round % 7, (round % 7) + ACCOUNT_SIZE);
      const view = new DataView(data.buffer, data.byteOffset, ACCOUNT_SIZE);
      view.setUint8(108, round % 3);
      view.setUint32(72, tags[round % tags.length] ?? 0, true);
      view.setUint32(109, tags[(round >> 1) % tags.length] ?? 0, true);
      view.setUint32(129, tags[(round >> 2) % tags.length] ?? 0, true);
      expect(readTokenAccount(info(data, TOKEN_PROGRAM, 7))).toEqual(reference(data));
    }
  });
});
