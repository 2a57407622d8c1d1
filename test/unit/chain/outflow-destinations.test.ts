import { ACCOUNT_SIZE, AccountLayout, AccountState } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { checkEscrow, escrowArrivals, orderDeposit } from "../../../src/chain/escrow-rule.js";
import type { InstructionEffect } from "../../../src/chain/instruction-effects.js";
import {
  checkDebitDestinations,
  type DestinationContext,
  offCurveAuthorities,
  walletTokenDebits,
} from "../../../src/chain/outflow-destinations.js";
import { SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";
import type { PostAccount } from "../../../src/chain/simulated-effects.js";
import type { TokenAccountState } from "../../../src/chain/token-account.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";

/**
 * Where the wallet's spent tokens land (outflow-destinations) and whether an order's deposit reaches
 * its escrow (escrow-rule), on hand-built post-states.
 */
const key = () => Keypair.generate().publicKey.toBase58();
const offCurve = (program = key()) =>
  PublicKey.findProgramAddressSync(
    [Keypair.generate().publicKey.toBuffer()],
    new PublicKey(program),
  )[0].toBase58();
const wallet = key();
const stranger = key();
const usdc = key();
const service = key();
const walletUsdc = key();

function tokenPost(owner: string, amount = 0n, mint = usdc): PostAccount {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint: new PublicKey(mint),
      owner: new PublicKey(owner),
      amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      delegatedAmount: 0n,
      state: AccountState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return { owner: TOKEN_PROGRAM, lamports: 2_039_280, data };
}

function transfer(
  where: string,
  source: string,
  destination: string,
  amount: bigint,
  op = "transfer",
): InstructionEffect {
  return {
    where,
    programId: TOKEN_PROGRAM,
    op,
    roles: { source, destination, authority: wallet },
    accounts: [source, destination, wallet],
    amount,
  };
}

function refusal(run: () => void): string {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
    throw error;
  }
  return "passed";
}

const walletTokens = new Map([[walletUsdc, { mint: usdc }]]);

describe("walletTokenDebits", () => {
  it("takes transfers out of the wallet's token accounts, top-level and inner, in order", () => {
    const other = key();
    const effects: InstructionEffect[] = [
      transfer("0", walletUsdc, other, 5n),
      transfer("1", other, walletUsdc, 7n), // into the wallet: no debit
      transfer("1.0", walletUsdc, stranger, 3n, "transferChecked"),
      { ...transfer("2", walletUsdc, other, 9n), programId: SYSTEM_PROGRAM }, // not a token program
      { ...transfer("3", walletUsdc, other, 9n), op: "burn" }, // no destination: counted by amount alone
    ];
    expect(walletTokenDebits(effects, walletTokens)).toEqual([
      { where: "0", op: "transfer", source: walletUsdc, destination: other, mint: usdc, amount: 5n },
      {
        where: "1.0",
        op: "transferChecked",
        source: walletUsdc,
        destination: stranger,
        mint: usdc,
        amount: 3n,
      },
    ]);
  });
});

describe("checkDebitDestinations", () => {
  const destination = key();
  function check(
    post: PostAccount | null | undefined,
    authorities: DestinationContext["authorities"] = new Map(),
  ) {
    const debit = walletTokenDebits([transfer("4.1", walletUsdc, destination, 100n)], walletTokens);
    const postMap = new Map<string, PostAccount | null>();
    if (post !== undefined) postMap.set(destination, post);
    return refusal(() =>
      checkDebitDestinations(debit, {
        wallet,
        walletTokens,
        post: postMap,
        authorities,
        allowedPrograms: new Set([SYSTEM_PROGRAM, service]),
      }),
    );
  }
  const prefix = `outflow_destination: instruction 4.1: transfer sends 100 of mint ${usdc} from the wallet's ${walletUsdc} to ${destination}`;

  it("passes a token account the wallet holds after the simulation", () => {
    expect(check(tokenPost(wallet))).toBe("passed");
  });

  it("refuses a token account of another wallet (an authority on the curve)", () => {
    expect(check(tokenPost(stranger))).toBe(
      `${prefix}, whose authority ${stranger} is another wallet (a key on the curve)`,
    );
  });

  it("passes an authority off the curve with no account, or one of an allowed program (System too)", () => {
    const pda = offCurve();
    expect(check(tokenPost(pda))).toBe("passed");
    expect(check(tokenPost(pda), new Map([[pda, null]]))).toBe("passed");
    expect(check(tokenPost(pda), new Map([[pda, { owner: service }]]))).toBe("passed");
    expect(check(tokenPost(pda), new Map([[pda, { owner: SYSTEM_PROGRAM }]]))).toBe("passed");
  });

  it("refuses an authority off the curve that is an account of a program not on the allow-list", () => {
    const pda = offCurve();
    const foreign = key();
    expect(check(tokenPost(pda), new Map([[pda, { owner: foreign }]]))).toBe(
      `${prefix}, whose authority ${pda} is an account of ${foreign}, a program not on the allow-list`,
    );
  });

  it("refuses what is no token account after the simulation, closed, or not shown at all", () => {
    expect(check({ owner: SYSTEM_PROGRAM, lamports: 1, data: Buffer.alloc(0) })).toBe(
      `${prefix}, which is no token account after the simulation`,
    );
    expect(check(null)).toBe(`${prefix}, which the transaction closes`);
    expect(check(undefined)).toBe(`${prefix}, whose state after the simulation is unknown`);
  });

  it("passes the wallet's own account closed within the transaction (closing pays the wallet)", () => {
    const temp = key();
    const own = new Map([...walletTokens, [temp, { mint: usdc }]]);
    const debits = walletTokenDebits([transfer("0", walletUsdc, temp, 1n)], own);
    expect(
      refusal(() =>
        checkDebitDestinations(debits, {
          wallet,
          walletTokens: own,
          post: new Map([[temp, null]]),
          authorities: new Map(),
          allowedPrograms: new Set(),
        }),
      ),
    ).toBe("passed");
  });
});

describe("offCurveAuthorities", () => {
  it("names each off-curve authority of a destination once; never the wallet or a key on the curve", () => {
    const pda = offCurve();
    const [a, b, c, d] = [key(), key(), key(), key()];
    const post = new Map<string, PostAccount | null>([
      [a, tokenPost(pda)],
      [b, tokenPost(pda)],
      [c, tokenPost(stranger)],
      [d, tokenPost(wallet)],
    ]);
    const debits = walletTokenDebits(
      [a, b, c, d].map((to, i) => transfer(String(i), walletUsdc, to, 1n)),
      walletTokens,
    );
    expect(offCurveAuthorities(debits, post, wallet)).toEqual([pda]);
  });
});

describe("escrow rule", () => {
  const trigger: Intent = {
    key: "trigger-x",
    kind: "createTrigger",
    wallet,
    strategy: "test",
    inputMint: usdc,
    outputMint: key(),
    makingAmount: "500",
    takingAmount: "1",
  };
  const recurring: Intent = {
    key: "recurring-x",
    kind: "createRecurring",
    wallet,
    strategy: "test",
    inputMint: usdc,
    outputMint: key(),
    inAmount: "700",
    numberOfOrders: 2,
    intervalSeconds: 60,
  };
  const order = offCurve(service);
  const escrow = key();
  const heldBefore = (amount: bigint): Map<string, TokenAccountState> =>
    new Map([
      [
        escrow,
        { programId: TOKEN_PROGRAM, mint: usdc, owner: order, amount, delegatedAmount: 0n, lamports: 1n },
      ],
    ]);

  it("knows the deposit of orders only", () => {
    expect(orderDeposit(trigger)).toEqual({ mint: usdc, amount: 500n });
    expect(orderDeposit(recurring)).toEqual({ mint: usdc, amount: 700n });
    expect(
      orderDeposit({ key: "c", kind: "claim", wallet, strategy: "t", positionPubkey: key() }),
    ).toBeUndefined();
  });

  it("counts what the escrow gains, not what it held before", () => {
    const post = new Map([[escrow, tokenPost(order, 800n)]]);
    expect(escrowArrivals({ intent: trigger, wallet, order, before: heldBefore(300n), post }, usdc)).toBe(
      500n,
    );
    expect(
      refusal(() => checkEscrow({ intent: trigger, wallet, order, before: heldBefore(300n), post })),
    ).toBe("passed");
    expect(
      refusal(() => checkEscrow({ intent: trigger, wallet, order, before: heldBefore(301n), post })),
    ).toBe(
      `escrow_short: simulation: 499 of mint ${usdc} arrives in the order ${order}'s token accounts, the order deposits 500`,
    );
  });

  it("without a named order takes any off-curve authority's account, never the wallet's or another wallet's", () => {
    const [a, b, c, d] = [key(), key(), key(), key()];
    const post = new Map<string, PostAccount | null>([
      [a, tokenPost(offCurve(), 200n)],
      [b, tokenPost(wallet, 1_000n)],
      [c, tokenPost(stranger, 1_000n)],
      [d, tokenPost(offCurve(), 1_000n, key())], // another mint
    ]);
    const ctx = { intent: recurring, wallet, before: new Map(), post };
    expect(escrowArrivals(ctx, usdc)).toBe(200n);
    expect(refusal(() => checkEscrow(ctx))).toBe(
      `escrow_short: simulation: 200 of mint ${usdc} arrives in token accounts of an off-curve authority (an escrow), the order deposits 700`,
    );
  });

  it("with a named order takes only that order's accounts", () => {
    const post = new Map([[escrow, tokenPost(offCurve(service), 500n)]]);
    expect(escrowArrivals({ intent: trigger, wallet, order, before: new Map(), post }, usdc)).toBe(0n);
  });

  it("asks nothing of other kinds", () => {
    const swap: Intent = {
      key: "s",
      kind: "swap",
      wallet,
      strategy: "t",
      inputMint: usdc,
      outputMint: key(),
      amount: "5",
    };
    expect(refusal(() => checkEscrow({ intent: swap, wallet, before: new Map(), post: new Map() }))).toBe(
      "passed",
    );
  });
});
