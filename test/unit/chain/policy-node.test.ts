import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  createInitializeAccount3Instruction,
  createTransferInstruction,
} from "@solana/spl-token";
import {
  type AccountInfo,
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  type Connection,
  Keypair,
  PublicKey,
  type SimulatedTransactionResponse,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { viewTransaction } from "../../../src/chain/decode.js";
import { checkTransaction, type PolicyConfig, type PolicyInput } from "../../../src/chain/policy.js";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  MEMO_PROGRAM,
  NATIVE_MINT,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
} from "../../../src/chain/programs.js";
import { PermanentError, PolicyRefusal, StaleTransaction, TransientError } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";

/**
 * checkTransaction against a small fake of the RPC node (outside the process): what the policy asks
 * the node, at which commitment, and what it does with answers a real node rarely gives (no inner
 * instructions, no post-state, a CPI to a program off the allow-list, inner instructions under an
 * index past the top-level ones). The local chain always answers in full; these are the node's
 * failures, and each must stop the policy without a signature.
 */
const walletKey = Keypair.generate();
const wallet = walletKey.publicKey;
const stranger = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();
const usdcLike = Keypair.generate().publicKey.toBase58();
const LAMPORTS = 1_000_000_000;
const wallets = { has: (key: PublicKey | string) => key.toString() === wallet.toBase58() };
const intent: Intent = {
  key: "claim-x",
  kind: "claim",
  wallet: wallet.toBase58(),
  strategy: "test",
  positionPubkey: Keypair.generate().publicKey.toBase58(),
};
const config: PolicyConfig = {
  maxComputeUnitPriceMicroLamports: 1_000_000n,
  maxPriorityFeeLamports: 1_000_000n,
};

/** A memo; `writable` names one more account, writable, which the fake node's simulation may change. */
const memo = (writable?: PublicKey) =>
  new TransactionInstruction({
    programId: new PublicKey(MEMO_PROGRAM),
    keys: writable ? [{ pubkey: writable, isSigner: false, isWritable: true }] : [],
    data: Buffer.from("hi"),
  });

/** A memo instruction that names `keys` read-only (the fake node does not run it). */
const memoReading = (keys: PublicKey[]) =>
  new TransactionInstruction({
    programId: new PublicKey(MEMO_PROGRAM),
    keys: keys.map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
    data: Buffer.alloc(0),
  });

function decoded(options: { readonlyPayer?: boolean; writable?: PublicKey; table?: PublicKey[] } = {}) {
  // Many accounts go through a lookup table (a message of static keys alone would be too large).
  const tables = options.table
    ? [
        new AddressLookupTableAccount({
          key: Keypair.generate().publicKey,
          state: {
            deactivationSlot: 2n ** 64n - 1n,
            lastExtendedSlot: 0,
            lastExtendedSlotStartIndex: 0,
            addresses: options.table,
          },
        }),
      ]
    : [];
  const message = new TransactionMessage({
    payerKey: wallet,
    recentBlockhash: blockhash,
    instructions: [memo(options.writable), ...(options.table ? [memoReading(options.table)] : [])],
  }).compileToV0Message(tables);
  // A header that makes the fee payer read-only: no builder makes one, a crafted one can.
  if (options.readonlyPayer) message.header.numReadonlySignedAccounts = 1;
  return viewTransaction(new VersionedTransaction(message), tables);
}

type Sim = SimulatedTransactionResponse;

/** The node: its answers, and every call made to it with its arguments. */
class FakeNode {
  calls: [string, ...unknown[]][] = [];
  height = 100;
  reads = 0;
  /** How many accounts each getMultipleAccountsInfo call asked for. */
  chunks: number[] = [];
  /** Every address a getMultipleAccountsInfo call asked for. */
  read = new Set<string>();
  /** Methods that fail as a node that does not offer them (JSON-RPC -32601: not retried). */
  failing = new Set<string>();
  /** The wallet's lamports as the read numbered `read` (from 1) finds them. */
  walletLamports: (read: number) => number = () => LAMPORTS;
  /** Accounts other than the wallet, by address, as the read numbered `read` (from 1) finds them. */
  other: (address: string, read: number) => AccountInfo<Buffer> | null = () => null;
  blockhashValid = true;
  /** The simulation's answer, given the addresses asked for. */
  simulate: (addresses: string[]) => Sim = (addresses) => ({
    err: null,
    logs: [],
    innerInstructions: [],
    unitsConsumed: 300,
    accounts: addresses.map(() => ({
      owner: SYSTEM_PROGRAM,
      lamports: LAMPORTS - 5_000,
      data: ["", "base64"],
      executable: false,
      rentEpoch: 0,
    })),
  });

  connection(): Connection {
    const account = (key: PublicKey): AccountInfo<Buffer> | null =>
      key.equals(wallet)
        ? {
            owner: SystemProgram.programId,
            lamports: this.walletLamports(this.reads),
            data: Buffer.alloc(0),
            executable: false,
          }
        : this.other(key.toBase58(), this.reads);
    return {
      getBlockHeight: async (commitment: unknown) => {
        this.calls.push(["getBlockHeight", commitment]);
        this.fail("getBlockHeight");
        return this.height;
      },
      isBlockhashValid: async (hash: string, options: unknown) => {
        this.calls.push(["isBlockhashValid", hash, options]);
        this.fail("isBlockhashValid");
        return { context: { slot: 1 }, value: this.blockhashValid };
      },
      getMultipleAccountsInfo: async (keys: PublicKey[], commitment: unknown) => {
        this.calls.push(["getMultipleAccountsInfo", commitment]);
        this.fail("getMultipleAccountsInfo");
        this.reads += 1;
        this.chunks.push(keys.length);
        for (const key of keys) this.read.add(key.toBase58());
        return keys.map(account);
      },
      simulateTransaction: async (_tx: unknown, options: { accounts: { addresses: string[] } }) => {
        this.calls.push(["simulateTransaction", options]);
        this.fail("simulateTransaction");
        return { context: { slot: 1 }, value: this.simulate(options.accounts.addresses) };
      },
    } as unknown as Connection;
  }

  private fail(method: string): void {
    if (this.failing.has(method)) throw Object.assign(new Error("Method not found"), { code: -32601 });
  }

  methods(): string[] {
    return this.calls.map(([method]) => method);
  }
}

function check(
  node: FakeNode,
  overrides: Partial<PolicyInput> = {},
  configOverrides: Partial<PolicyConfig> = {},
) {
  return checkTransaction({
    decoded: decoded(),
    intent,
    wallets,
    connection: node.connection(),
    config: { ...config, ...configOverrides },
    lastValidBlockHeight: 150,
    ...overrides,
  });
}

async function failure(run: Promise<unknown>): Promise<Error> {
  try {
    await run;
  } catch (error) {
    return error as Error;
  }
  throw new Error("passed");
}

describe("policy: what it asks the node", () => {
  it("passes a memo paying the fee, having read the height, the blockhash, the accounts twice and simulated once", async () => {
    const node = new FakeNode();
    const report = await check(node);
    expect(report).toMatchObject({ feeLamports: 5_000n, lamportsOut: 5_000n, unitsConsumed: 300 });
    expect(node.methods()).toEqual([
      "getBlockHeight",
      "isBlockhashValid",
      "getMultipleAccountsInfo",
      "simulateTransaction",
      "getMultipleAccountsInfo",
    ]);
  });

  it("asks at confirmed by default, and at the configured commitment otherwise", async () => {
    for (const [commitment, expected] of [
      [undefined, "confirmed"],
      ["finalized", "finalized"],
    ] as const) {
      const node = new FakeNode();
      await check(node, {}, commitment ? { commitment } : {});
      expect(node.calls[0]).toEqual(["getBlockHeight", expected]);
      expect(node.calls[1]).toEqual(["isBlockhashValid", blockhash, { commitment: expected }]);
      expect(node.calls[2]).toEqual(["getMultipleAccountsInfo", expected]);
      expect(node.calls[3]?.[1]).toMatchObject({
        commitment: expected,
        sigVerify: false,
        replaceRecentBlockhash: false,
        innerInstructions: true,
        accounts: { encoding: "base64", addresses: [wallet.toBase58()] },
      });
    }
  });

  it("a blockhash the node does not know is stale, and nothing is simulated", async () => {
    const node = new FakeNode();
    node.blockhashValid = false;
    const error = await failure(check(node));
    expect(error).toBeInstanceOf(StaleTransaction);
    expect(error.message).toContain(`the node does not accept the blockhash ${blockhash}`);
    expect(node.methods()).not.toContain("simulateTransaction");
  });

  it("does not ask about the blockhash when the check is off", async () => {
    const node = new FakeNode();
    node.blockhashValid = false;
    await check(node, {}, { checkBlockhashWithRpc: false });
    expect(node.methods()).not.toContain("isBlockhashValid");
  });

  it("uses the caller's block height when given, and reads none", async () => {
    const node = new FakeNode();
    node.height = 1_000;
    await check(node, { blockHeight: 150 });
    expect(node.methods()).not.toContain("getBlockHeight");
    const error = await failure(check(new FakeNode(), { blockHeight: 151 }));
    expect(error).toBeInstanceOf(StaleTransaction);
    expect(error.message).toContain("block height 151 is past the transaction's last valid block height 150");
  });

  it("a read height at the last valid block height still passes; one past it is stale", async () => {
    const node = new FakeNode();
    node.height = 150;
    await check(node);
    node.height = 151;
    const error = await failure(check(node));
    expect(error).toBeInstanceOf(StaleTransaction);
    expect(node.methods().filter((m) => m === "simulateTransaction")).toHaveLength(1);
  });

  it("reports no units when the node gives none", async () => {
    const node = new FakeNode();
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const { unitsConsumed: _, ...rest } = simulate(addresses);
      return rest;
    };
    const report = await check(node);
    expect(Object.keys(report)).not.toContain("unitsConsumed");
  });
});

describe("policy: fee and inflow", () => {
  it("allows the base fee plus the priority fee", async () => {
    const message = new TransactionMessage({
      payerKey: wallet,
      recentBlockhash: blockhash,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
        memo(),
      ],
    }).compileToV0Message();
    const report = await check(new FakeNode(), {
      decoded: viewTransaction(new VersionedTransaction(message), []),
    });
    // 5,000 a signature + 200,000 units x 1,000 micro-lamports.
    expect(report.feeLamports).toBe(5_200n);
  });

  it("checks the expected inflow against what the simulation shows coming in", async () => {
    const node = new FakeNode();
    const simulate = node.simulate;
    // The wallet gains 1,000,000 lamports (a swap to SOL) and pays the fee.
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      const [walletAfter] = sim.accounts ?? [];
      return {
        ...sim,
        accounts: [{ ...(walletAfter as NonNullable<typeof walletAfter>), lamports: LAMPORTS + 995_000 }],
      };
    };
    const inflow = (minRaw: bigint) => ({ inflow: { what: "swap output", mints: [NATIVE_MINT], minRaw } });
    await check(node, inflow(1_000_000n));
    const error = await failure(check(node, inflow(1_000_001n)));
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect(error.message).toContain("swap output brings the wallet 1000000");
  });
});

describe("policy: answers of the node that decide nothing", () => {
  it.each<[string, (sim: Sim) => Sim, string]>([
    [
      "no inner instructions",
      ({ innerInstructions: _, ...sim }) => sim,
      "the node returned no inner instructions",
    ],
    [
      "no post-state",
      ({ accounts: _, ...sim }) => sim,
      "the node returned no post-state for the wallet's accounts",
    ],
    [
      "a post-state short of the accounts asked for",
      (sim) => ({ ...sim, accounts: [] }),
      "the node returned no post-state for the wallet's accounts",
    ],
  ])("%s: transient", async (_, change, message) => {
    const node = new FakeNode();
    const simulate = node.simulate;
    node.simulate = (addresses) => change(simulate(addresses));
    const error = await failure(check(node));
    expect(error).toBeInstanceOf(TransientError);
    expect(error.message).toContain(message);
  });
});

describe("policy: what the simulation shows", () => {
  /** A simulation whose inner instructions are `groups`. */
  function withInner(groups: Sim["innerInstructions"]): FakeNode {
    const node = new FakeNode();
    const simulate = node.simulate;
    node.simulate = (addresses) => ({ ...simulate(addresses), innerInstructions: groups });
    return node;
  }
  const transferOut = {
    programId: SystemProgram.programId,
    accounts: [wallet, stranger],
    data: bs58.encode(
      SystemProgram.transfer({ fromPubkey: wallet, toPubkey: stranger, lamports: 1_000 }).data,
    ),
  };

  it("refuses a CPI to a program off the allow-list, naming where", async () => {
    const node = withInner([
      { index: 0, instructions: [memoInner(), { programId: stranger, accounts: [], data: "" }] },
    ]);
    const error = await failure(check(node));
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect(error.message).toBe(
      `program_not_allowed: inner instruction 0.1 calls ${stranger.toBase58()}, not on the allow-list`,
    );
  });

  it.each([0, 1, 5])(
    "checks the effects of inner instructions under index %i (past the top-level ones too)",
    async (index) => {
      const error = await failure(check(withInner([{ index, instructions: [memoInner(), transferOut] }])));
      expect(error).toBeInstanceOf(PolicyRefusal);
      expect(error.message).toContain(`instruction ${index}.1`);
    },
  );

  it("checks every group under one index", async () => {
    const error = await failure(
      check(
        withInner([
          { index: 0, instructions: [memoInner()] },
          { index: 0, instructions: [memoInner(), transferOut] },
        ]),
      ),
    );
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect(error.message).toContain("instruction 0.1");
  });

  it("reports the programs its inner instructions call", async () => {
    const report = await check(withInner([{ index: 0, instructions: [memoInner()] }]));
    expect(report.innerPrograms).toEqual([MEMO_PROGRAM]);
  });

  it("refuses a transaction whose fee payer is not writable", async () => {
    const error = await failure(check(new FakeNode(), { decoded: decoded({ readonlyPayer: true }) }));
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect(error.message).toBe("fee_payer: the fee payer is not writable");
  });
});

function memoInner() {
  return { programId: new PublicKey(MEMO_PROGRAM), accounts: [], data: bs58.encode(Buffer.from("x")) };
}

describe("policy: accounts the transaction names", () => {
  const extra = Keypair.generate().publicKey;
  const RENT = 2_039_280;
  const account = (owner: string, data: Buffer = Buffer.alloc(0)): AccountInfo<Buffer> => ({
    owner: new PublicKey(owner),
    lamports: RENT,
    data,
    executable: false,
  });
  /** A node where `extra` reads as `before`, then shows as a token account of the wallet after simulating. */
  function handedToWallet(before: AccountInfo<Buffer> | null): FakeNode {
    const node = new FakeNode();
    node.other = (address) => (address === extra.toBase58() ? before : null);
    const data = Buffer.alloc(ACCOUNT_SIZE);
    AccountLayout.encode(
      {
        mint: stranger,
        owner: wallet,
        amount: 0n,
        delegateOption: 0,
        delegate: stranger,
        delegatedAmount: 0n,
        state: AccountState.Initialized,
        isNativeOption: 0,
        isNative: 0n,
        closeAuthorityOption: 0,
        closeAuthority: stranger,
      },
      data,
    );
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      const accounts = sim.accounts ?? [];
      accounts[1] = {
        owner: TOKEN_PROGRAM,
        lamports: RENT,
        data: [data.toString("base64"), "base64"],
        executable: false,
        rentEpoch: 0,
      };
      return { ...sim, accounts };
    };
    return node;
  }
  // The claim pays in the account's mint: a new account of it is one the claim needs.
  const payoutMints = [stranger.toBase58()];
  const lamportsOut = async (before: AccountInfo<Buffer> | null) =>
    (await check(handedToWallet(before), { decoded: decoded({ writable: extra }) }, { payoutMints }))
      .lamportsOut;

  it("counts a token account made for the wallet from nothing as its own (its rent is not lost)", async () => {
    expect(await lamportsOut(null)).toBe(5_000n - BigInt(RENT));
    // Bare lamports (pre-funded) are no account yet either.
    expect(await lamportsOut(account(SYSTEM_PROGRAM))).toBe(5_000n - BigInt(RENT));
  });

  it("counts the rent of a new wallet account of a mint the claim does not pay in as spent", async () => {
    // The wallet pays the account's rent, as it would for an associated token account it creates.
    const node = handedToWallet(null);
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      const [payer, ...rest] = sim.accounts ?? [];
      return { ...sim, accounts: [payer ? { ...payer, lamports: payer.lamports - RENT } : null, ...rest] };
    };
    const error = await failure(
      check(node, { decoded: decoded({ writable: extra }) }, { payoutMints: [usdcLike] }),
    );
    expect(error).toBeInstanceOf(PolicyRefusal);
    expect(error.message).toBe(
      `outflow_sol: simulation: the wallet loses ${5_000 + RENT} lamports (SOL and wrapped SOL), allowed 5000 fees + 0`,
    );
  });

  it("does not count an existing account that becomes the wallet's token account", async () => {
    // Owned by another program, or by System with data: an account already, handed over.
    expect(await lamportsOut(account(stranger.toBase58()))).toBe(5_000n);
    expect(await lamportsOut(account(SYSTEM_PROGRAM, Buffer.alloc(10)))).toBe(5_000n);
  });

  it("takes an account the simulation shows closed (no post-state) for gone, nothing of the wallet's", async () => {
    const node = new FakeNode();
    node.other = (address) => (address === extra.toBase58() ? account(stranger.toBase58()) : null);
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      return { ...sim, accounts: [(sim.accounts ?? [])[0] ?? null, null] };
    };
    const report = await check(node, { decoded: decoded({ writable: extra }) });
    expect(report.lamportsOut).toBe(5_000n);
  });

  it.each([
    ["appears", 1],
    ["disappears", 2],
  ] as const)("simulates again when an account %s between the reads", async (_, firstRead) => {
    const node = new FakeNode();
    // Present from (or up to) the second read, the one right after the first simulation.
    node.other = (address, read) =>
      address === extra.toBase58() && read >= 2 === (firstRead === 1) ? account(stranger.toBase58()) : null;
    await check(node, { decoded: decoded({ writable: extra }) });
    expect(node.methods().filter((m) => m === "simulateTransaction")).toHaveLength(2);
  });
});

describe("policy: reads and retries", () => {
  const extra = Keypair.generate().publicKey;
  /** The wallet holds LAMPORTS + `value(read)`: a change between two reads is another transaction of it. */
  function changing(value: (read: number) => number): FakeNode {
    const node = new FakeNode();
    node.walletLamports = (read) => LAMPORTS + value(read);
    return node;
  }
  const simulations = (node: FakeNode) => node.methods().filter((m) => m === "simulateTransaction").length;

  it("simulates until the accounts hold still between the reads, up to three times", async () => {
    // Reads 1-2 and 3-4 differ, 5-6 agree: the third simulation stands.
    const node = changing((read) => Math.max(0, 5 - read));
    await check(node, { decoded: decoded({ writable: extra }) });
    expect(simulations(node)).toBe(3);
  });

  it("simulates once when only a stranger's account changes between the reads (a vault paying other claims)", async () => {
    const node = new FakeNode();
    node.other = (address, read) =>
      address === extra.toBase58()
        ? {
            owner: new PublicKey(TOKEN_PROGRAM),
            lamports: 2_039_280 + read,
            data: Buffer.alloc(ACCOUNT_SIZE, read),
            executable: false,
          }
        : null;
    const report = await check(node, { decoded: decoded({ writable: extra }) });
    expect(simulations(node)).toBe(1);
    expect(report.lamportsOut).toBe(5_000n);
  });

  it("leaves accounts that change during every simulation to the job's retry after three", async () => {
    const node = changing((read) => read);
    const error = await failure(check(node, { decoded: decoded({ writable: extra }) }));
    expect(error).toBeInstanceOf(TransientError);
    expect(error.message).toContain("the wallet's accounts changed during each of 3 simulations");
    expect(simulations(node)).toBe(3);
  });

  it.each([
    [100, [100]],
    [101, [100, 1]],
    [250, [100, 100, 50]],
  ])("reads %i accounts in calls of at most 100", async (count, chunks) => {
    // The wallet, then addresses from a lookup table (the memo program is not read: a program).
    const table = Array.from({ length: count - 1 }, () => Keypair.generate().publicKey);
    const node = new FakeNode();
    await check(node, { decoded: decoded({ table }) });
    expect(node.chunks).toEqual([...chunks, ...chunks]);
  });

  it("reads no program's account: the invoked one, nor an allow-listed one named as an account", async () => {
    // A program account's data is its code (the associated-token program's is ~105 KB): no check reads it.
    const table = [new PublicKey(ASSOCIATED_TOKEN_PROGRAM), Keypair.generate().publicKey];
    const node = new FakeNode();
    await check(node, { decoded: decoded({ table }) });
    expect([...node.read].sort()).toEqual([wallet.toBase58(), table[1]?.toBase58()].sort());
  });

  it.each(["getBlockHeight", "isBlockhashValid", "getMultipleAccountsInfo", "simulateTransaction"])(
    "names %s when the node fails it",
    async (method) => {
      const node = new FakeNode();
      node.failing.add(method);
      const error = await failure(check(node));
      expect(error).toBeInstanceOf(PermanentError);
      expect(error.message).toMatch(new RegExp(`^${method}: RPC error -32601`));
    },
  );
});

describe("policy: each instruction's effects counted once", () => {
  const mint = Keypair.generate().publicKey;
  const source = Keypair.generate().publicKey;
  const escrow = Keypair.generate().publicKey;
  // The pool's vault: a token account held by a program-derived address (off the curve).
  const pool = PublicKey.findProgramAddressSync([Buffer.from("pool")], Keypair.generate().publicKey)[0];
  const swap: Intent = {
    key: "swap-x",
    kind: "swap",
    wallet: wallet.toBase58(),
    strategy: "test",
    inputMint: mint.toBase58(),
    outputMint: stranger.toBase58(),
    amount: "10",
  };
  const tokenData = (amount: bigint, owner = wallet) => {
    const data = Buffer.alloc(ACCOUNT_SIZE);
    AccountLayout.encode(
      {
        mint,
        owner,
        amount,
        delegateOption: 0,
        delegate: stranger,
        delegatedAmount: 0n,
        state: AccountState.Initialized,
        isNativeOption: 0,
        isNative: 0n,
        closeAuthorityOption: 0,
        closeAuthority: stranger,
      },
      data,
    );
    return data;
  };
  /** The swap's input (10 of 100) leaves the wallet's account by a CPI under `index`. */
  function spendsInner(index: number): FakeNode {
    const node = new FakeNode();
    node.other = (address) =>
      address === source.toBase58()
        ? {
            owner: new PublicKey(TOKEN_PROGRAM),
            lamports: 2_039_280,
            data: tokenData(100n),
            executable: false,
          }
        : null;
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      const after = new Map([
        [source.toBase58(), tokenData(90n)],
        [escrow.toBase58(), tokenData(10n, pool)],
      ]);
      const accounts = (sim.accounts ?? []).map((account, i) => {
        const data = after.get(addresses[i] ?? "");
        if (!data) return account;
        return {
          owner: TOKEN_PROGRAM,
          lamports: 2_039_280,
          data: [data.toString("base64"), "base64"] as [string, "base64"],
          executable: false,
          rentEpoch: 0,
        };
      });
      const transfer = createTransferInstruction(source, escrow, wallet, 10n);
      const inner = {
        programId: transfer.programId,
        accounts: transfer.keys.map((k) => k.pubkey),
        data: bs58.encode(transfer.data),
      };
      return { ...sim, accounts, innerInstructions: [{ index, instructions: [inner] }] };
    };
    return node;
  }

  it("refuses a top-level spend beyond the allowance before simulating", async () => {
    const node = spendsInner(0);
    const message = new TransactionMessage({
      payerKey: wallet,
      recentBlockhash: blockhash,
      instructions: [createTransferInstruction(source, escrow, wallet, 11n)],
    }).compileToV0Message();
    const error = await failure(
      check(node, { intent: swap, decoded: viewTransaction(new VersionedTransaction(message), []) }),
    );
    expect(error.message).toBe(
      `outflow_token: instruction 0: transfer takes 11 of mint ${mint.toBase58()} from the wallet in all, allowed 10`,
    );
    expect(node.methods()).not.toContain("simulateTransaction");
  });

  it.each([0, 1])(
    "passes a swap whose input leaves under index %i: counted once, not twice",
    async (index) => {
      // The transaction names both token accounts writable, as the swap program's instruction would.
      const message = new TransactionMessage({
        payerKey: wallet,
        recentBlockhash: blockhash,
        instructions: [
          new TransactionInstruction({
            programId: new PublicKey(MEMO_PROGRAM),
            keys: [source, escrow].map((pubkey) => ({ pubkey, isSigner: false, isWritable: true })),
            data: Buffer.from("swap"),
          }),
        ],
      }).compileToV0Message();
      const node = spendsInner(index);
      const report = await check(node, {
        intent: swap,
        decoded: viewTransaction(new VersionedTransaction(message), []),
      });
      expect(report.tokensOut).toEqual({ [mint.toBase58()]: "10" });
      // The vault's authority is outside the transaction: read once, after the two reads of its accounts.
      expect(node.methods().filter((m) => m === "getMultipleAccountsInfo")).toHaveLength(3);
      expect(node.chunks.at(-1)).toBe(1);
      expect(node.read.has(pool.toBase58())).toBe(true);
    },
  );
});

describe("policy: rules that wait for the simulation", () => {
  it("does not refuse SOL sent to an account that a program then makes the wallet's token account by CPI", async () => {
    // Before simulating, the destination is nobody's; the simulation shows it is the wallet's wrapped
    // SOL account (a CPI of an allowed service program initialized it), so the SOL stays the wallet's.
    const service = Keypair.generate().publicKey;
    const wsol = Keypair.generate().publicKey;
    const swap: Intent = {
      key: "swap-sol",
      kind: "swap",
      wallet: wallet.toBase58(),
      strategy: "test",
      inputMint: NATIVE_MINT,
      outputMint: stranger.toBase58(),
      amount: "1000",
    };
    const message = new TransactionMessage({
      payerKey: wallet,
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({ fromPubkey: wallet, toPubkey: wsol, lamports: 1_000 }),
        new TransactionInstruction({
          programId: service,
          keys: [{ pubkey: wsol, isSigner: false, isWritable: true }],
          data: Buffer.alloc(0),
        }),
      ],
    }).compileToV0Message();
    const data = Buffer.alloc(ACCOUNT_SIZE);
    AccountLayout.encode(
      {
        mint: new PublicKey(NATIVE_MINT),
        owner: wallet,
        amount: 1_000n,
        delegateOption: 0,
        delegate: stranger,
        delegatedAmount: 0n,
        state: AccountState.Initialized,
        isNativeOption: 1,
        isNative: 0n,
        closeAuthorityOption: 0,
        closeAuthority: stranger,
      },
      data,
    );
    const init = createInitializeAccount3Instruction(wsol, new PublicKey(NATIVE_MINT), wallet);
    const node = new FakeNode();
    const simulate = node.simulate;
    node.simulate = (addresses) => {
      const sim = simulate(addresses);
      const [walletAfter] = sim.accounts ?? [];
      return {
        ...sim,
        accounts: [
          { ...(walletAfter as NonNullable<typeof walletAfter>), lamports: LAMPORTS - 6_000 },
          {
            owner: TOKEN_PROGRAM,
            lamports: 1_000,
            data: [data.toString("base64"), "base64"],
            executable: false,
            rentEpoch: 0,
          },
        ],
        innerInstructions: [
          {
            index: 1,
            instructions: [
              {
                programId: init.programId,
                accounts: init.keys.map((k) => k.pubkey),
                data: bs58.encode(init.data),
              },
            ],
          },
        ],
      };
    };
    const report = await check(
      node,
      { intent: swap, decoded: viewTransaction(new VersionedTransaction(message), []) },
      { extraPrograms: [service.toBase58()] },
    );
    expect(report.lamportsOut).toBe(5_000n);
    expect(report.innerPrograms).toEqual([TOKEN_PROGRAM]);
  });
});
