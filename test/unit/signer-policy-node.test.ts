import { ACCOUNT_SIZE, AccountLayout, AccountState } from "@solana/spl-token";
import {
  type AccountInfo,
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
import { viewTransaction } from "../../src/chain/decode.js";
import { checkTransaction, type PolicyConfig, type PolicyInput } from "../../src/chain/policy.js";
import { MEMO_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { PolicyRefusal, StaleTransaction, TransientError } from "../../src/core/errors.js";
import type { Intent } from "../../src/core/intent.js";

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

function decoded(options: { readonlyPayer?: boolean; writable?: PublicKey } = {}) {
  const message = new TransactionMessage({
    payerKey: wallet,
    recentBlockhash: blockhash,
    instructions: [memo(options.writable)],
  }).compileToV0Message();
  // A header that makes the fee payer read-only: no builder makes one, a crafted one can.
  if (options.readonlyPayer) message.header.numReadonlySignedAccounts = 1;
  return viewTransaction(new VersionedTransaction(message), []);
}

type Sim = SimulatedTransactionResponse;

/** The node: its answers, and every call made to it with its arguments. */
class FakeNode {
  calls: [string, ...unknown[]][] = [];
  height = 100;
  reads = 0;
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
        ? { owner: SystemProgram.programId, lamports: LAMPORTS, data: Buffer.alloc(0), executable: false }
        : this.other(key.toBase58(), this.reads);
    return {
      getBlockHeight: async (commitment: unknown) => {
        this.calls.push(["getBlockHeight", commitment]);
        return this.height;
      },
      isBlockhashValid: async (hash: string, options: unknown) => {
        this.calls.push(["isBlockhashValid", hash, options]);
        return { context: { slot: 1 }, value: this.blockhashValid };
      },
      getMultipleAccountsInfo: async (keys: PublicKey[], commitment: unknown) => {
        this.calls.push(["getMultipleAccountsInfo", commitment]);
        this.reads += 1;
        return keys.map(account);
      },
      simulateTransaction: async (_tx: unknown, options: { accounts: { addresses: string[] } }) => {
        this.calls.push(["simulateTransaction", options]);
        return { context: { slot: 1 }, value: this.simulate(options.accounts.addresses) };
      },
    } as unknown as Connection;
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
  const lamportsOut = async (before: AccountInfo<Buffer> | null) =>
    (await check(handedToWallet(before), { decoded: decoded({ writable: extra }) })).lamportsOut;

  it("counts a token account made for the wallet from nothing as its own (its rent is not lost)", async () => {
    expect(await lamportsOut(null)).toBe(5_000n - BigInt(RENT));
    // Bare lamports (pre-funded) are no account yet either.
    expect(await lamportsOut(account(SYSTEM_PROGRAM))).toBe(5_000n - BigInt(RENT));
  });

  it("does not count an existing account that becomes the wallet's token account", async () => {
    // Owned by another program, or by System with data: an account already, handed over.
    expect(await lamportsOut(account(stranger.toBase58()))).toBe(5_000n);
    expect(await lamportsOut(account(SYSTEM_PROGRAM, Buffer.alloc(10)))).toBe(5_000n);
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
