import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  checkEffect,
  createdWalletTokenAccounts,
  type EffectContext,
  type EffectTotals,
  newTotals,
} from "../../../src/chain/effect-rules.js";
import type { InstructionEffect } from "../../../src/chain/instruction-effects.js";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  MEMO_PROGRAM,
  NATIVE_MINT,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from "../../../src/chain/programs.js";
import { PolicyRefusal } from "../../../src/core/errors.js";

/**
 * Each rule of effect-rules at its edges: which role makes an instruction the wallet's, the running
 * totals across instructions, the amount at exactly the allowance and one over, and what the rules
 * leave alone. Effects are written out as the policy sees them after reading the instructions.
 */
const key = () => Keypair.generate().publicKey.toBase58();
const wallet = key();
const ours = key();
const stranger = key();
const mint = key();

const context = (overrides: Partial<EffectContext> = {}): EffectContext => ({
  wallet,
  walletTokens: new Map([[ours, { mint }]]),
  allowance: { maxLamports: 1_000n, tokens: new Map([[mint, 50n]]) },
  simulated: true,
  ...overrides,
});

function effect(
  programId: string,
  op: string,
  roles: Record<string, string>,
  extra: Partial<InstructionEffect> = {},
): InstructionEffect {
  return { where: "4", programId, op, roles, accounts: Object.values(roles), ...extra };
}
const system = (op: string, roles: Record<string, string>, lamports?: bigint) =>
  effect(SYSTEM_PROGRAM, op, roles, lamports === undefined ? {} : { lamports });
const token = (op: string, roles: Record<string, string>, amount?: bigint) =>
  effect(TOKEN_PROGRAM, op, roles, amount === undefined ? {} : { amount });

/** The refusal as `reason: detail`, or undefined when the effects pass, checked in order. */
function verdict(
  effects: InstructionEffect[],
  ctx = context(),
  totals: EffectTotals = newTotals(),
): string | undefined {
  try {
    for (const e of effects) checkEffect(e, ctx, totals);
    return undefined;
  } catch (error) {
    if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
    throw error;
  }
}

describe("System rules", () => {
  it.each(["advanceNonce", "withdrawFromNonce", "initializeNonce", "authorizeNonce", "upgradeNonce"])(
    "refuses %s whoever's accounts it names",
    (op) => {
      expect(verdict([system(op, { nonceAccount: stranger })])).toBe(
        `durable_nonce: instruction 4: System ${op}`,
      );
    },
  );

  it.each([
    ["assign", "account", "system_assign: instruction 4: assigns the wallet to another program"],
    ["assignWithSeed", "base", "system_assign: instruction 4: assigns the wallet to another program"],
    ["allocate", "account", "system_allocate: instruction 4: allocates data in the wallet account"],
    ["allocateWithSeed", "base", "system_allocate: instruction 4: allocates data in the wallet account"],
  ])("refuses %s with the wallet as %s, passes it on a stranger's account", (op, role, refusal) => {
    expect(verdict([system(op, { [role]: wallet })])).toBe(refusal);
    expect(verdict([system(op, { account: stranger, base: stranger })])).toBeUndefined();
  });

  it("refuses an account created at the wallet's address", () => {
    expect(verdict([system("createAccount", { source: stranger, newAccount: wallet }, 1n)])).toBe(
      "system_assign: instruction 4: creates an account at the wallet",
    );
  });

  it("counts a transfer with seed whose base is the wallet as the wallet's", () => {
    expect(
      verdict([system("transferWithSeed", { source: key(), sourceBase: wallet, destination: stranger }, 1n)]),
    ).toBe(
      "outflow_sol: instruction 4: System transferWithSeed sends 1 lamports from the wallet in all, allowed 0",
    );
  });

  it("refuses an unknown System operation on the wallet, not one on other accounts", () => {
    const unknown = effect(SYSTEM_PROGRAM, "unknown", {}, { accounts: [stranger, wallet] });
    expect(verdict([unknown])).toBe(
      "system_instruction_not_allowed: instruction 4: System unknown on the wallet",
    );
    expect(verdict([{ ...unknown, accounts: [stranger] }])).toBeUndefined();
  });

  it("leaves instructions of other programs to the allow-list, whatever their operation is called", () => {
    const lookalike = effect(
      MEMO_PROGRAM,
      "transfer",
      { source: ours, authority: wallet },
      { amount: 10n ** 9n },
    );
    expect(verdict([lookalike])).toBeUndefined();

    const memo = effect(
      MEMO_PROGRAM,
      "transfer",
      { source: wallet, destination: stranger },
      { lamports: 10n ** 9n },
    );
    expect(verdict([memo])).toBeUndefined();
  });
});

describe("plain SOL transfers (wrapping an order's SOL)", () => {
  const native = NATIVE_MINT;
  const wrapped = key();
  const solOrder = (simulated = true) =>
    context({
      walletTokens: new Map([[wrapped, { mint: native }]]),
      allowance: { maxLamports: 0n, tokens: new Map([[native, 1_000n]]) },
      simulated,
    });
  const transfer = (lamports: bigint, destination = wrapped) =>
    system("transfer", { source: wallet, destination }, lamports);

  it("allows the order's amount in all across transfers, not one lamport more", () => {
    expect(verdict([transfer(600n), transfer(400n)], solOrder())).toBeUndefined();
    expect(verdict([transfer(600n), transfer(401n)], solOrder())).toBe(
      "outflow_sol: instruction 4: System transfer sends 1001 lamports from the wallet in all, allowed 1000",
    );
  });

  it("allows a transfer to the wallet itself; refuses any lamport to a stranger once simulated", () => {
    expect(verdict([transfer(5n, wallet)], solOrder())).toBeUndefined();
    expect(verdict([transfer(1n, stranger)], solOrder())).toBe(
      `outflow_sol: instruction 4: System transfer sends 1 lamports from the wallet to ${stranger}, not a token account of the wallet`,
    );
    // Before the simulation the stranger's account may still become the wallet's: decided after.
    expect(verdict([transfer(1n, stranger)], solOrder(false))).toBeUndefined();
  });

  it("lets a transfer of nothing to a stranger pass, and names a transfer without a destination", () => {
    expect(verdict([transfer(0n, stranger)], solOrder())).toBeUndefined();
    const unnamed = system("transfer", { source: wallet }, 1n);
    expect(verdict([unnamed], solOrder())).toBe(
      "outflow_sol: instruction 4: System transfer sends 1 lamports from the wallet to an unnamed account, not a token account of the wallet",
    );
  });

  it("counts a transfer without a lamport figure as nothing", () => {
    expect(
      verdict([system("transfer", { source: wallet, destination: wrapped })], solOrder()),
    ).toBeUndefined();
  });

  it("does not count transfers from other accounts", () => {
    expect(
      verdict([system("transfer", { source: stranger, destination: wallet }, 10n ** 12n)]),
    ).toBeUndefined();
  });
});

describe("plain SOL transfers into the wallet's token accounts of other mints (rent)", () => {
  // The associated token program's way of opening an account at an address that already holds
  // lamports: a transfer of the rent it lacks. `ours` lacked 1,000 lamports of its rent.
  const junk = key();
  const charged = key();
  const rentCtx = (overrides: Partial<EffectContext> = {}) =>
    context({
      walletTokens: new Map([
        [ours, { mint }],
        [charged, { mint: junk }],
      ]),
      allowance: { maxLamports: 0n, tokens: new Map() },
      rentLacking: (account) => (account === ours || account === charged ? 1_000n : 0n),
      rentCharged: new Map([[charged, { mint: junk }]]),
      ...overrides,
    });
  const transfer = (lamports: bigint, destination = ours) =>
    system("transfer", { source: wallet, destination }, lamports);

  it("allows what the account lacked of its rent in all, not one lamport more, with no wrap allowance", () => {
    const totals = newTotals();
    expect(verdict([transfer(600n), transfer(400n)], rentCtx(), totals)).toBeUndefined();
    expect(totals.transferredLamports).toBe(0n);
    expect(verdict([transfer(600n), transfer(401n)], rentCtx())).toBe(
      `outflow_sol: instruction 4: System transfer pays 1001 lamports in all into ${ours}, the wallet's token account of mint ${mint}, which lacked 1000 of its rent`,
    );
  });

  it("refuses any lamport into an account that lacked nothing (an existing one), or with nothing known", () => {
    expect(verdict([transfer(1n)], rentCtx({ rentLacking: () => 0n }))).toMatch(
      /which lacked 0 of its rent$/,
    );
    expect(verdict([transfer(1n)], rentCtx({ rentLacking: undefined }))).toMatch(
      /which lacked 0 of its rent$/,
    );
  });

  it("counts the rent of an account of a mint the intent neither receives nor spends against the allowance", () => {
    expect(verdict([transfer(1n, charged)], rentCtx())).toBe(
      `outflow_sol: instruction 4: System transfer funds ${charged} a new token account of the wallet for mint ${junk}, which the intent neither receives nor spends; 1 lamports in all into such accounts, allowed 0`,
    );
    const allowed = { maxLamports: 1_000n, tokens: new Map() };
    expect(verdict([transfer(1_000n, charged)], rentCtx({ allowance: allowed }))).toBeUndefined();
  });

  it("decides after the simulation", () => {
    expect(verdict([transfer(10n ** 9n)], rentCtx({ simulated: false }))).toBeUndefined();
  });

  it("takes what createAccount funded the account with as rent already paid", () => {
    const create = system("createAccount", { source: wallet, newAccount: ours }, 600n);
    expect(verdict([create, transfer(400n)], rentCtx())).toBeUndefined();
    expect(verdict([create, transfer(401n)], rentCtx())).toBe(
      `outflow_sol: instruction 4: System transfer pays 1001 lamports in all into ${ours}, the wallet's token account of mint ${mint}, which lacked 1000 of its rent`,
    );
  });
});

describe("plain SOL transfers into the wallet's wrapped SOL account (the rent it lacked, then wrapping)", () => {
  // The associated token program opens it at an address someone sent lamports to with a transfer of
  // the 1,000 lamports of rent it lacks; the order's or swap's own transfer wraps its 50.
  const wrapped = key();
  const wrapCtx = (overrides: Partial<EffectContext> = {}) =>
    context({
      walletTokens: new Map([[wrapped, { mint: NATIVE_MINT }]]),
      allowance: { maxLamports: 50n, tokens: new Map([[NATIVE_MINT, 50n]]) },
      rentLacking: (account) => (account === wrapped ? 1_000n : 0n),
      ...overrides,
    });
  const transfer = (lamports: bigint) =>
    system("transfer", { source: wallet, destination: wrapped }, lamports);
  const wraps = (lamports: bigint, allowed = 50n) =>
    `outflow_sol: instruction 4: System transfer sends ${lamports} lamports from the wallet in all, allowed ${allowed}`;

  it("counts what the account lacked as rent and the rest against the wrap allowance, not one lamport more", () => {
    const totals = newTotals();
    expect(verdict([transfer(1_000n), transfer(50n)], wrapCtx(), totals)).toBeUndefined();
    expect(totals.transferredLamports).toBe(50n);
    expect(verdict([transfer(1_000n), transfer(51n)], wrapCtx())).toBe(wraps(51n));
    // Rent and wrapping in one transfer: the rent first.
    expect(verdict([transfer(1_050n)], wrapCtx())).toBeUndefined();
    expect(verdict([transfer(1_051n)], wrapCtx())).toBe(wraps(51n));
    // The rent is paid once: a second such transfer wraps.
    expect(verdict([transfer(1_000n), transfer(1_000n)], wrapCtx())).toBe(wraps(1_000n));
  });

  it("takes what createAccount funded the account with as rent already paid", () => {
    const create = system("createAccount", { source: wallet, newAccount: wrapped }, 1_000n);
    expect(verdict([create, transfer(50n)], wrapCtx())).toBeUndefined();
    expect(verdict([create, transfer(51n)], wrapCtx())).toBe(wraps(51n));
  });

  it("counts the rent against the allowance when the intent neither receives nor spends wrapped SOL", () => {
    const claim = wrapCtx({
      allowance: { maxLamports: 0n, tokens: new Map() },
      rentCharged: new Map([[wrapped, { mint: NATIVE_MINT }]]),
    });
    expect(verdict([transfer(1n)], claim)).toBe(
      `outflow_sol: instruction 4: System transfer funds ${wrapped} a new token account of the wallet for mint ${NATIVE_MINT}, which the intent neither receives nor spends; 1 lamports in all into such accounts, allowed 0`,
    );
  });

  it("counts all of it as wrapping before the simulation, or when the account lacked nothing", () => {
    expect(verdict([transfer(1_000n)], wrapCtx({ simulated: false }))).toBe(wraps(1_000n));
    expect(verdict([transfer(51n)], wrapCtx({ rentLacking: () => 0n }))).toBe(wraps(51n));
    expect(verdict([transfer(51n)], wrapCtx({ rentLacking: undefined }))).toBe(wraps(51n));
  });
});

describe("rent the wallet pays for new accounts", () => {
  const create = (newAccount: string, lamports?: bigint) =>
    system("createAccount", { source: wallet, newAccount }, lamports);

  it("allows rent into accounts that are not the wallet's up to the allowance in all, not one more", () => {
    expect(verdict([create(key(), 600n), create(key(), 400n)])).toBeUndefined();
    const second = key();
    expect(verdict([create(key(), 600n), create(second, 401n)])).toBe(
      `outflow_sol: instruction 4: System createAccount funds ${second} that is not a token account of the wallet; 1001 lamports in all into such accounts, allowed 1000`,
    );
  });

  it("does not count rent into the wallet's own token accounts", () => {
    expect(verdict([create(ours, 10n ** 9n), create(key(), 1_000n)])).toBeUndefined();
  });

  it("counts nothing before the simulation (the new account may be the wallet's), and no figure as zero", () => {
    const totals = newTotals();
    expect(verdict([create(key(), 10n ** 9n)], context({ simulated: false }), totals)).toBeUndefined();
    expect(totals.foreignLamports).toBe(0n);
    expect(verdict([create(key())], context(), totals)).toBeUndefined();
    expect(totals.foreignLamports).toBe(0n);
  });

  it("names a funded account without an address as `an account`", () => {
    expect(verdict([system("createAccount", { source: wallet }, 1_001n)])).toBe(
      "outflow_sol: instruction 4: System createAccount funds an account that is not a token account of the wallet; 1001 lamports in all into such accounts, allowed 1000",
    );
  });

  it("does not count rent funded by someone else", () => {
    expect(
      verdict([system("createAccount", { source: stranger, newAccount: key() }, 10n ** 9n)]),
    ).toBeUndefined();
  });
});

describe("token spending", () => {
  it("counts spending from the wallet's accounts across instructions up to the allowance, not one more", () => {
    const transfer = (amount: bigint) =>
      token("transfer", { source: ours, destination: stranger, authority: key() }, amount);
    expect(verdict([transfer(20n), transfer(30n)])).toBeUndefined();
    expect(verdict([transfer(20n), transfer(31n)])).toBe(
      `outflow_token: instruction 4: transfer takes 51 of mint ${mint} from the wallet in all, allowed 50`,
    );
  });

  it("counts a burn from the wallet's account by its `account` role", () => {
    expect(verdict([token("burn", { account: ours, authority: key() }, 51n)])).toBe(
      `outflow_token: instruction 4: burn takes 51 of mint ${mint} from the wallet in all, allowed 50`,
    );
  });

  it("counts spending the wallet signs for as owner from an account of a known mint", () => {
    const other = key();
    expect(verdict([token("transferChecked", { source: key(), mint: other, owner: wallet }, 1n)])).toBe(
      `outflow_token: instruction 4: transferChecked takes 1 of mint ${other} from the wallet in all, allowed 0`,
    );
  });

  it("ignores spending from accounts that are neither the wallet's nor signed by it", () => {
    expect(
      verdict([token("transfer", { source: key(), destination: stranger, authority: stranger }, 10n ** 15n)]),
    ).toBe(undefined);
  });

  it("decides an unknown mint after the simulation, and counts no amount as zero", () => {
    const unknownMint = token("transfer", { source: key(), destination: stranger, authority: wallet }, 1n);
    expect(verdict([unknownMint], context({ simulated: false }))).toBeUndefined();
    expect(verdict([token("transfer", { source: ours, authority: wallet })])).toBeUndefined();
  });

  it("names the mint an instruction claims and the account's real one", () => {
    const other = key();
    expect(verdict([token("transferChecked", { source: ours, mint: other, authority: wallet }, 1n)])).toBe(
      `outflow_token: instruction 4: transferChecked names mint ${other} for a ${mint} account`,
    );
  });

  it("names the account of unknown mint the wallet signs a spend from, or says it is unnamed", () => {
    const from = key();
    expect(verdict([token("transfer", { source: from, authority: wallet }, 1n)])).toBe(
      `outflow_token: instruction 4: transfer signed by the wallet takes from ${from} of unknown mint`,
    );
    expect(verdict([token("burn", { authority: wallet }, 1n)])).toBe(
      "outflow_token: instruction 4: burn signed by the wallet takes from an account of unknown mint",
    );
  });

  it("takes a spend's mint from the wallet's account, not from the instruction", () => {
    const totals = newTotals();
    verdict([token("transfer", { source: ours, authority: wallet }, 7n)], context(), totals);
    expect(totals.tokens).toEqual(new Map([[mint, 7n]]));
  });
});

describe("token authority rules", () => {
  it.each(["approve", "approveChecked"])(
    "refuses %s on the wallet's account or signed by it as owner",
    (op) => {
      expect(verdict([token(op, { source: ours, delegate: stranger, owner: key() })])).toBe(
        `token_approve: instruction 4: ${op} gives ${stranger} a delegate`,
      );
      expect(verdict([token(op, { source: key(), owner: wallet })])).toBe(
        `token_approve: instruction 4: ${op} gives someone a delegate`,
      );
    },
  );

  it("refuses setAuthority on the wallet's account or signed by the wallet", () => {
    expect(verdict([token("setAuthority", { account: ours, authority: key() })])).toBe(
      `token_authority_change: instruction 4: setAuthority on ${ours} of the wallet`,
    );
    expect(verdict([token("setAuthority", { authority: wallet })])).toBe(
      "token_authority_change: instruction 4: setAuthority on an account of the wallet",
    );
    expect(verdict([token("setAuthority", { account: key(), authority: stranger })])).toBeUndefined();
  });

  it("refuses closing an account the wallet owns to anyone but the wallet", () => {
    const elsewhere = key();
    expect(
      verdict([token("closeAccount", { account: elsewhere, destination: stranger, owner: wallet })]),
    ).toBe(`token_close_account: instruction 4: closes ${elsewhere} of the wallet to ${stranger}`);
    expect(verdict([token("closeAccount", { owner: wallet })])).toBe(
      "token_close_account: instruction 4: closes an account of the wallet to someone else",
    );
    expect(
      verdict([token("closeAccount", { account: ours, destination: wallet, owner: wallet })]),
    ).toBeUndefined();
    expect(verdict([token("closeAccount", { account: key(), destination: stranger, owner: stranger })])).toBe(
      undefined,
    );
  });

  it("passes the harmless operations on the wallet's accounts and refuses any other on them", () => {
    for (const op of ["syncNative", "initializeAccount3", "revoke", "thawAccount", "mintToChecked"]) {
      expect(verdict([token(op, { account: ours, owner: wallet })])).toBeUndefined();
    }
    expect(verdict([effect(TOKEN_2022_PROGRAM, "unknown-26", {}, { accounts: [ours] })])).toBe(
      "token_instruction_not_allowed: instruction 4: token unknown-26 on the wallet's accounts",
    );
    expect(verdict([token("freezeAccount", { account: key(), freezeAuthority: wallet })])).toBe(
      "token_instruction_not_allowed: instruction 4: token freezeAccount on the wallet's accounts",
    );
    expect(verdict([token("freezeAccount", { account: key(), freezeAuthority: stranger })])).toBeUndefined();
  });
});

describe("token accounts created for the wallet", () => {
  const ataOf = (owner: string, ofMint: string, program = TOKEN_PROGRAM) =>
    getAssociatedTokenAddressSync(
      new PublicKey(ofMint),
      new PublicKey(owner),
      true,
      new PublicKey(program),
    ).toBase58();
  const create = (roles: Record<string, string>, op = "create") =>
    effect(ASSOCIATED_TOKEN_PROGRAM, op, roles);

  it("takes the token program from the instruction, SPL Token when it names none", () => {
    const t22Account = ataOf(wallet, mint, TOKEN_2022_PROGRAM);
    const splAccount = ataOf(wallet, mint);
    const created = createdWalletTokenAccounts(
      [
        create({ account: t22Account, wallet, mint, tokenProgram: TOKEN_2022_PROGRAM }, "createIdempotent"),
        create({ account: splAccount, wallet, mint }),
        // Derived under Token-2022 but said to be SPL Token: not the wallet's account.
        create({ account: t22Account, wallet, mint: key(), tokenProgram: TOKEN_PROGRAM }),
      ],
      wallet,
    );
    expect(created).toEqual(
      new Map([
        [t22Account, { mint }],
        [splAccount, { mint }],
      ]),
    );
  });

  it("does not count an associated account under a program that is not a token program", () => {
    const fake = key();
    const account = ataOf(wallet, mint, fake);
    expect(
      createdWalletTokenAccounts([create({ account, wallet, mint, tokenProgram: fake })], wallet).size,
    ).toBe(0);
  });

  it("skips roles that are not addresses and instructions that do not create", () => {
    const created = createdWalletTokenAccounts(
      [
        create({ account: ataOf(wallet, mint), wallet, mint: "not-an-address" }),
        create({ account: ataOf(wallet, mint), wallet, mint }, "recoverNested"),
        effect(SYSTEM_PROGRAM, "initializeAccount3", { account: key(), mint, owner: wallet }),
        token("initializeAccount3", { account: key(), owner: wallet }),
        token("transfer", { account: key(), mint, owner: wallet }),
      ],
      wallet,
    );
    expect(created.size).toBe(0);
  });

  it("does not take an associated account the instruction says is someone else's, nor a lookalike program's", () => {
    const account = ataOf(wallet, mint);
    expect(createdWalletTokenAccounts([create({ account, wallet: stranger, mint })], wallet).size).toBe(0);
    const lookalike = effect(MEMO_PROGRAM, "create", { account, wallet, mint });
    expect(createdWalletTokenAccounts([lookalike], wallet).size).toBe(0);
    expect(
      createdWalletTokenAccounts([token("initializeAccount3", { mint, owner: wallet })], wallet).size,
    ).toBe(0);
  });

  it("finds the associated account of a wallet that is a program address (off the curve)", () => {
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from("vault")], new PublicKey(MEMO_PROGRAM));
    const account = ataOf(pda.toBase58(), mint);
    expect(
      createdWalletTokenAccounts([create({ account, wallet: pda.toBase58(), mint })], pda.toBase58()),
    ).toEqual(new Map([[account, { mint }]]));
  });

  it("counts an initialized account by its owner under either token program", () => {
    const account = key();
    const created = createdWalletTokenAccounts(
      [effect(TOKEN_2022_PROGRAM, "initializeAccount2", { account, mint, owner: wallet })],
      wallet,
    );
    expect(created).toEqual(new Map([[account, { mint }]]));
  });
});
