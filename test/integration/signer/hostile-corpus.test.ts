import {
  AuthorityType,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createBurnCheckedInstruction,
  createCloseAccountInstruction,
  createInitializeAccount3Instruction,
  createSetAuthorityInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  ACCOUNT_SIZE as TOKEN_ACCOUNT_SIZE,
  TOKEN_PROGRAM_ID,
  NATIVE_MINT as WRAPPED_SOL_MINT,
} from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  TransactionInstruction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectedInflow, type InflowExpectation } from "../../../src/chain/inflow-rules.js";
import type { PolicyConfig } from "../../../src/chain/policy.js";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  MEMO_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from "../../../src/chain/programs.js";
import type { Intent } from "../../../src/core/intent.js";
import { signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { captureLogger } from "./helpers.js";
import { buildTransaction, memo, randomProgramId, toBase64 } from "./tx-builders.js";

/**
 * Hostile transactions, each a real attack shape built with the real instruction builders against the
 * local chain's real accounts and blockhashes. Each must be refused with its reason, and nothing may be
 * signed, sent or moved.
 */
interface Built {
  tx?: VersionedTransaction;
  base64?: string;
  lastValidBlockHeight?: number;
  intent?: Intent;
  policy?: Partial<PolicyConfig>;
  /** What the transaction must bring in, as the keeper's sign path derives it. */
  inflow?: InflowExpectation;
}
interface HostileCase {
  name: string;
  reason: string;
  /** Which rule refused it, where several give the same reason. */
  detail?: RegExp;
  build: (env: SignerEnv, bh: { blockhash: string; lastValidBlockHeight: number }) => Promise<Built> | Built;
}

const USDC_DECIMALS = 6;
/** Rent of a token account (165 bytes), what an associated token account creation costs. */
const TOKEN_ACCOUNT_RENT = 2_039_280;

/** Wrapped SOL accounts (native token accounts) of the wallet and the stranger, set up in beforeAll. */
let walletWsol: PublicKey;
let strangerWsol: PublicKey;

/** An order spending native SOL: `lamports` of wrapped SOL, whichever way the service moves it. */
function solOrder(env: SignerEnv, kind: "createTrigger" | "swap", lamports: number): Intent {
  const key = `${kind}-sol-${Math.random().toString(36).slice(2, 8)}`;
  const wallet = env.wallet.toBase58();
  const base = { key, wallet, strategy: "test", inputMint: WRAPPED_SOL_MINT.toBase58() };
  return kind === "swap"
    ? { ...base, kind, outputMint: env.usdc.toBase58(), amount: String(lamports) }
    : {
        ...base,
        kind,
        outputMint: env.usdc.toBase58(),
        makingAmount: String(lamports),
        takingAmount: "1",
      };
}

/** The vault's payout of a claim, as the first instruction of a claim transaction. */
function payout(env: SignerEnv, amount: bigint) {
  return createTransferCheckedInstruction(
    env.vaultUsdc,
    env.usdc,
    env.walletUsdc,
    env.vault.publicKey,
    amount,
    USDC_DECIMALS,
  );
}

/** The keeper's inflow options for the env: its USDC is the payout mint. */
function inflowOptions(env: SignerEnv) {
  return { payoutMints: [env.usdc.toBase58()], toleranceBps: 50 };
}

/** A claim intent whose strategy expects `payoutRaw`, and the inflow the sign path derives from it. */
function claimExpecting(env: SignerEnv, payoutRaw: bigint, built: Built): Built {
  const intent = { ...env.claimIntent(), expectedPayoutMicroUsd: String(payoutRaw) } as Intent;
  return { ...built, intent, inflow: expectedInflow(intent, {}, inflowOptions(env)) };
}

function trigger(env: SignerEnv, makingAmount: string): Intent {
  return {
    key: `trigger-${makingAmount}-${Math.random().toString(36).slice(2, 8)}`,
    kind: "createTrigger",
    wallet: env.wallet.toBase58(),
    strategy: "test",
    inputMint: env.usdc.toBase58(),
    outputMint: env.t22.toBase58(),
    makingAmount,
    takingAmount: "1",
  };
}

const corpus: HostileCase[] = [
  {
    name: "foreign fee payer",
    reason: "fee_payer",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.stranger.publicKey,
        blockhash: bh.blockhash,
        instructions: [memo("hi")],
        coSigners: [env.stranger],
      }),
    }),
  },
  {
    name: "intent for a wallet Keeper does not hold",
    reason: "wallet_not_held",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.stranger.publicKey,
        blockhash: bh.blockhash,
        instructions: [memo("hi")],
      }),
      intent: { ...env.claimIntent(), wallet: env.stranger.publicKey.toBase58() },
    }),
  },
  {
    name: "SOL drain transfer to a stranger",
    reason: "outflow_sol",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          SystemProgram.transfer({
            fromPubkey: env.wallet,
            toPubkey: env.stranger.publicKey,
            lamports: LAMPORTS_PER_SOL,
          }),
        ],
      }),
    }),
  },
  {
    name: "token transfer to a stranger",
    reason: "outflow_token",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createTransferCheckedInstruction(
            env.walletUsdc,
            env.usdc,
            env.strangerUsdc,
            env.wallet,
            1_000_000n,
            USDC_DECIMALS,
          ),
        ],
      }),
    }),
  },
  {
    name: "token approve to a stranger",
    reason: "token_approve",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createApproveInstruction(env.walletUsdc, env.stranger.publicKey, env.wallet, 2n ** 64n - 1n),
        ],
      }),
    }),
  },
  {
    name: "close of our (empty) token account to a stranger",
    reason: "token_close_account",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [createCloseAccountInstruction(env.walletEmpty, env.stranger.publicKey, env.wallet)],
      }),
    }),
  },
  {
    name: "set-authority: owner of our token account to a stranger",
    reason: "token_authority_change",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createSetAuthorityInstruction(
            env.walletUsdc,
            env.wallet,
            AuthorityType.AccountOwner,
            env.stranger.publicKey,
          ),
        ],
      }),
    }),
  },
  {
    name: "set-authority: close authority of our Token-2022 account",
    reason: "token_authority_change",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createSetAuthorityInstruction(
            env.walletT22,
            env.wallet,
            AuthorityType.CloseAccount,
            env.stranger.publicKey,
            [],
            TOKEN_2022_PROGRAM_ID,
          ),
        ],
      }),
    }),
  },
  {
    name: "unknown program",
    reason: "program_not_allowed",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          new TransactionInstruction({
            programId: randomProgramId(),
            keys: [
              { pubkey: env.wallet, isSigner: true, isWritable: true },
              { pubkey: env.walletUsdc, isSigner: false, isWritable: true },
            ],
            data: Buffer.from([1, 2, 3]),
          }),
        ],
      }),
    }),
  },
  {
    name: "extra required signer Keeper does not hold",
    reason: "foreign_signer",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [memo("co-sign", [env.stranger.publicKey])],
      }),
    }),
  },
  {
    name: "another wallet Keeper holds must sign too",
    reason: "foreign_signer",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [memo("co-sign", [env.otherWallet])],
      }),
    }),
  },
  {
    name: "outflow hidden behind an address lookup table",
    reason: "outflow_token",
    build: async (env, bh) => {
      const table = await env.lookupTable([env.walletUsdc, env.strangerUsdc, env.usdc]);
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          tables: [table],
          instructions: [
            createTransferCheckedInstruction(
              env.walletUsdc,
              env.usdc,
              env.strangerUsdc,
              env.wallet,
              5_000_000n,
              USDC_DECIMALS,
            ),
          ],
        }),
      };
    },
  },
  {
    name: "v0 with our writable token account in the lookup table and an approve",
    reason: "token_approve",
    build: async (env, bh) => {
      const table = await env.lookupTable([env.walletUsdc, env.stranger.publicKey]);
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          tables: [table],
          instructions: [createApproveInstruction(env.walletUsdc, env.stranger.publicKey, env.wallet, 1n)],
        }),
      };
    },
  },
  {
    name: "huge compute-unit price",
    reason: "compute_price_too_high",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    // The runtime would never run it (a repeated compute budget instruction), but a policy reading only
    // the first price would have let 1,000,000,000 micro-lamports a unit through.
    name: "two compute-unit prices, the second huge",
    reason: "compute_price_too_high",
    detail: /compute unit price 1000000000 micro-lamports, ceiling 1000000/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
          ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    name: "two compute-unit prices, the first huge (the last one small)",
    reason: "compute_price_too_high",
    detail: /compute unit price 1000000000 micro-lamports, ceiling 1000000/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000_000 }),
          ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    name: "two compute-unit limits, the first the whole block's share (last one small)",
    reason: "priority_fee_too_high",
    detail:
      /fee 1265000 lamports: priority 1260000 \(1400000 units x 900000 micro-lamports\) \+ base 5000 \(1 signatures\), budget 1000000/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 900_000 }),
          ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    name: "a price under the per-unit ceiling whose limit x price is over the lamport ceiling",
    reason: "priority_fee_too_high",
    detail:
      /fee 1265000 lamports: priority 1260000 \(1400000 units x 900000 micro-lamports\) \+ base 5000 \(1 signatures\), budget 1000000/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 900_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    name: "two modest compute-unit prices (a repeated compute budget instruction)",
    reason: "compute_budget_duplicate",
    detail: /2 SetComputeUnitPrice and 0 SetComputeUnitLimit/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
          ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 2_000 }),
          memo("priority"),
        ],
      }),
    }),
  },
  {
    name: "inner call to a program not on the allow-list (ATA program calling System)",
    reason: "program_not_allowed",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          // A fresh owner: the ATA does not exist yet, so the ATA program must call System to create it.
          ((owner) =>
            createAssociatedTokenAccountIdempotentInstruction(
              env.wallet,
              getAssociatedTokenAddressSync(env.usdc, owner),
              owner,
              env.usdc,
            ))(env.freshOwner),
        ],
      }),
      // A stricter deployment: System only ever reached through the ATA program's inner calls.
      policy: {
        allowedPrograms: [
          ASSOCIATED_TOKEN_PROGRAM,
          TOKEN_PROGRAM,
          TOKEN_2022_PROGRAM,
          COMPUTE_BUDGET_PROGRAM,
          MEMO_PROGRAM,
        ],
      },
    }),
  },
  {
    name: "rent drain through inner ATA creations for strangers",
    reason: "outflow_sol",
    build: (env, bh) => {
      const owners = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((k) => k.publicKey);
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          instructions: owners.map((owner) =>
            createAssociatedTokenAccountIdempotentInstruction(
              env.wallet,
              getAssociatedTokenAddressSync(env.usdc, owner),
              owner,
              env.usdc,
            ),
          ),
        }),
      };
    },
  },
  {
    name: "claim that also transfers SOL out",
    reason: "outflow_sol",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        coSigners: [env.vault],
        instructions: [
          createTransferCheckedInstruction(
            env.vaultUsdc,
            env.usdc,
            env.walletUsdc,
            env.vault.publicKey,
            5_000_000n,
            USDC_DECIMALS,
          ),
          SystemProgram.transfer({
            fromPubkey: env.wallet,
            toPubkey: env.stranger.publicKey,
            lamports: 10_000,
          }),
        ],
      }),
    }),
  },
  {
    name: "claim that also moves a token out",
    reason: "outflow_token",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        coSigners: [env.vault],
        instructions: [
          createTransferCheckedInstruction(
            env.vaultUsdc,
            env.usdc,
            env.walletUsdc,
            env.vault.publicKey,
            5_000_000n,
            USDC_DECIMALS,
          ),
          createTransferCheckedInstruction(
            env.walletT22,
            env.t22,
            env.strangerT22,
            env.wallet,
            1n,
            6,
            [],
            TOKEN_2022_PROGRAM_ID,
          ),
        ],
      }),
    }),
  },
  {
    name: "System assign of the wallet",
    reason: "system_assign",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [SystemProgram.assign({ accountPubkey: env.wallet, programId: randomProgramId() })],
      }),
    }),
  },
  {
    name: "System allocate of the wallet",
    reason: "system_allocate",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [SystemProgram.allocate({ accountPubkey: env.wallet, space: 128 })],
      }),
    }),
  },
  {
    name: "createAccount draining lamports into a stranger-owned account",
    reason: "outflow_sol",
    build: (env, bh) => {
      const sink = Keypair.generate();
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [sink],
          instructions: [
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: sink.publicKey,
              lamports: 2 * LAMPORTS_PER_SOL,
              space: 0,
              programId: env.stranger.publicKey,
            }),
          ],
        }),
      };
    },
  },
  {
    name: "durable nonce (never expires, could land after a rebuild)",
    reason: "durable_nonce",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          SystemProgram.nonceAdvance({
            noncePubkey: Keypair.generate().publicKey,
            authorizedPubkey: env.wallet,
          }),
          memo("n"),
        ],
      }),
    }),
  },
  {
    name: "Token-2022 approve",
    reason: "token_approve",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createApproveInstruction(
            env.walletT22,
            env.stranger.publicKey,
            env.wallet,
            1n,
            [],
            TOKEN_2022_PROGRAM_ID,
          ),
        ],
      }),
    }),
  },
  {
    name: "burn of our tokens",
    reason: "outflow_token",
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [createBurnCheckedInstruction(env.walletUsdc, env.usdc, env.wallet, 1n, USDC_DECIMALS)],
      }),
    }),
  },
  {
    name: "order: transferChecked of a different mint than its input",
    reason: "outflow_token",
    build: (env, bh) => ({
      intent: trigger(env, "5000000"),
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createTransferCheckedInstruction(
            env.walletT22,
            env.t22,
            env.escrowT22,
            env.wallet,
            1_000n,
            6,
            [],
            TOKEN_2022_PROGRAM_ID,
          ),
        ],
      }),
    }),
  },
  {
    name: "order spending more than its input amount",
    reason: "outflow_token",
    build: (env, bh) => ({
      intent: trigger(env, "5000000"),
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createTransferCheckedInstruction(
            env.walletUsdc,
            env.usdc,
            env.escrowUsdc,
            env.wallet,
            5_000_001n,
            USDC_DECIMALS,
          ),
        ],
      }),
    }),
  },
  {
    name: "valid-looking but invalid existing co-signature",
    reason: "invalid_signature",
    build: (env, bh) => {
      const tx = buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        coSigners: [env.vault],
        instructions: [
          createTransferCheckedInstruction(
            env.vaultUsdc,
            env.usdc,
            env.walletUsdc,
            env.vault.publicKey,
            5_000_000n,
            USDC_DECIMALS,
          ),
        ],
      });
      const vaultSlot = tx.signatures[1] as Uint8Array;
      vaultSlot[10] = (vaultSlot[10] as number) ^ 0xff;
      return { tx };
    },
  },
  {
    name: "co-signature of other bytes (the claim amount changed after the vault signed)",
    reason: "invalid_signature",
    build: (env, bh) => {
      const signedSmall = buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        coSigners: [env.vault],
        instructions: [
          createTransferCheckedInstruction(
            env.vaultUsdc,
            env.usdc,
            env.walletUsdc,
            env.vault.publicKey,
            1n,
            USDC_DECIMALS,
          ),
        ],
      });
      const tx = buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createTransferCheckedInstruction(
            env.vaultUsdc,
            env.usdc,
            env.walletUsdc,
            env.vault.publicKey,
            2n,
            USDC_DECIMALS,
          ),
        ],
      });
      tx.signatures[1] = signedSmall.signatures[1] as Uint8Array;
      return { tx };
    },
  },
  {
    name: "trailing bytes after the transaction",
    reason: "decode_failed",
    build: (env, bh) => {
      const tx = buildTransaction({ payer: env.wallet, blockhash: bh.blockhash, instructions: [memo("x")] });
      return {
        base64: Buffer.concat([Buffer.from(tx.serialize()), Buffer.from("extra")]).toString("base64"),
      };
    },
  },
  {
    // Audit, high: SOL and wrapped SOL were two budgets of the order's amount each, so both could go.
    name: "SOL order: System transfer of its amount to a stranger plus its amount in wrapped SOL to a stranger",
    reason: "outflow_sol",
    detail:
      /System transfer sends 1000000000 lamports from the wallet to \w+, not a token account of the wallet/,
    build: (env, bh) => ({
      intent: solOrder(env, "createTrigger", LAMPORTS_PER_SOL),
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          SystemProgram.transfer({
            fromPubkey: env.wallet,
            toPubkey: env.stranger.publicKey,
            lamports: LAMPORTS_PER_SOL,
          }),
          createTransferCheckedInstruction(
            walletWsol,
            WRAPPED_SOL_MINT,
            strangerWsol,
            env.wallet,
            BigInt(LAMPORTS_PER_SOL),
            9,
          ),
        ],
      }),
    }),
  },
  {
    // The same double spend without a plain transfer: a new account for the stranger takes the SOL.
    name: "SOL swap: its amount into a stranger's new account plus its amount in wrapped SOL to a stranger",
    reason: "outflow_sol",
    detail: /^simulation: the wallet loses \d+ lamports \(SOL and wrapped SOL\)/,
    build: (env, bh) => {
      const sink = Keypair.generate();
      return {
        intent: solOrder(env, "swap", LAMPORTS_PER_SOL),
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [sink],
          instructions: [
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: sink.publicKey,
              lamports: LAMPORTS_PER_SOL,
              space: 0,
              programId: SystemProgram.programId,
            }),
            createTransferCheckedInstruction(
              walletWsol,
              WRAPPED_SOL_MINT,
              strangerWsol,
              env.wallet,
              BigInt(LAMPORTS_PER_SOL),
              9,
            ),
          ],
        }),
      };
    },
  },
  {
    // Audit, medium: the rent allowance of a claim paid a stranger's account.
    name: "claim that also funds a stranger's pre-signed account with two token accounts' rent",
    reason: "outflow_sol",
    detail: /System createAccount funds \w+ that is not a token account of the wallet; 4078560 lamports/,
    build: (env, bh) => {
      const sink = Keypair.generate();
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault, sink],
          instructions: [
            payout(env, 5_000_000n),
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: sink.publicKey,
              lamports: 2 * TOKEN_ACCOUNT_RENT,
              space: 0,
              programId: SystemProgram.programId,
            }),
          ],
        }),
      };
    },
  },
  {
    // Their owners can close them and keep the rent.
    name: "claim that also creates two associated token accounts for strangers",
    reason: "outflow_sol",
    detail: /System createAccount funds \w+ that is not a token account of the wallet; 2039280 lamports/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        coSigners: [env.vault],
        instructions: [
          payout(env, 5_000_000n),
          ...[env.freshOwner, env.freshOwner].map((owner) =>
            createAssociatedTokenAccountIdempotentInstruction(
              env.wallet,
              getAssociatedTokenAddressSync(env.usdc, owner),
              owner,
              env.usdc,
            ),
          ),
        ],
      }),
    }),
  },
  {
    name: "claim that also creates a token account owned by a stranger (createAccount + initializeAccount3)",
    reason: "outflow_sol",
    detail: /System createAccount funds \w+ that is not a token account of the wallet/,
    build: (env, bh) => {
      const account = Keypair.generate();
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault, account],
          instructions: [
            payout(env, 5_000_000n),
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: account.publicKey,
              lamports: TOKEN_ACCOUNT_RENT,
              space: TOKEN_ACCOUNT_SIZE,
              programId: TOKEN_PROGRAM_ID,
            }),
            createInitializeAccount3Instruction(account.publicKey, env.usdc, env.stranger.publicKey),
          ],
        }),
      };
    },
  },
  {
    // The payout goes through a token account the transaction opens for the wallet, and on to a
    // stranger: the wallet's own balances never drop, but what the claim brings in is taken.
    name: "claim whose payout lands in a new account of the wallet and is passed on to a stranger",
    reason: "outflow_token",
    detail: /transferChecked takes 5000000 of mint \w+ from the wallet in all, allowed 0/,
    build: (env, bh) => {
      const account = Keypair.generate();
      return {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault, account],
          instructions: [
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: account.publicKey,
              lamports: TOKEN_ACCOUNT_RENT,
              space: TOKEN_ACCOUNT_SIZE,
              programId: TOKEN_PROGRAM_ID,
            }),
            createInitializeAccount3Instruction(account.publicKey, env.usdc, env.wallet),
            createTransferCheckedInstruction(
              env.vaultUsdc,
              env.usdc,
              account.publicKey,
              env.vault.publicKey,
              5_000_000n,
              USDC_DECIMALS,
            ),
            createTransferCheckedInstruction(
              account.publicKey,
              env.usdc,
              env.strangerUsdc,
              env.wallet,
              5_000_000n,
              USDC_DECIMALS,
            ),
          ],
        }),
      };
    },
  },
  {
    // The vault pays the claim, but to a stranger: nothing leaves the wallet, nothing reaches it.
    name: "claim whose payout goes to a stranger's token account",
    reason: "inflow_short",
    detail: /claim payout brings the wallet 0 of mint \w+, expected at least 4975000/,
    build: (env, bh) =>
      claimExpecting(env, 5_000_000n, {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault],
          instructions: [
            createTransferCheckedInstruction(
              env.vaultUsdc,
              env.usdc,
              env.strangerUsdc,
              env.vault.publicKey,
              5_000_000n,
              USDC_DECIMALS,
            ),
          ],
        }),
      }),
  },
  {
    name: "claim paying less than its payout, beyond the tolerance (50 bps)",
    reason: "inflow_short",
    detail: /claim payout brings the wallet 4974999 of mint \w+, expected at least 4975000/,
    build: (env, bh) =>
      claimExpecting(env, 5_000_000n, {
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault],
          instructions: [payout(env, 4_974_999n)],
        }),
      }),
  },
  {
    // The wallet pays its input in full and gets back a fraction of the build's threshold.
    name: "swap paying out below its otherAmountThreshold",
    reason: "inflow_short",
    detail: /swap output brings the wallet 10 of mint \w+, expected at least 990000/,
    build: (env, bh) => {
      const intent: Intent = {
        key: `swap-short-${Math.random().toString(36).slice(2, 8)}`,
        kind: "swap",
        wallet: env.wallet.toBase58(),
        strategy: "test",
        inputMint: env.t22.toBase58(),
        outputMint: env.usdc.toBase58(),
        amount: "1000000",
      };
      return {
        intent,
        inflow: expectedInflow(intent, { minInflowRaw: "990000" }, inflowOptions(env)),
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: bh.blockhash,
          coSigners: [env.vault],
          instructions: [
            createTransferCheckedInstruction(
              env.walletT22,
              env.t22,
              env.escrowT22,
              env.wallet,
              1_000_000n,
              6,
              [],
              TOKEN_2022_PROGRAM_ID,
            ),
            payout(env, 10n),
          ],
        }),
      };
    },
  },
  {
    name: "simulation fails (transfer of more than the wallet holds, within the order's allowance)",
    reason: "simulation_failed",
    build: (env, bh) => ({
      intent: trigger(env, "1000000000000"),
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [
          createTransferCheckedInstruction(
            env.walletUsdc,
            env.usdc,
            env.escrowUsdc,
            env.wallet,
            1_000_000_000_000n,
            USDC_DECIMALS,
          ),
        ],
      }),
    }),
  },
];

/**
 * Transactions that cannot land as built: their blockhash is past its height or unknown to the node.
 * Nothing is signed or sent, and they are not refusals (nothing is wrong with what they do): the
 * outcome is `expired`, which makes the keeper ask the service for a fresh transaction, bounded.
 */
const staleCases: HostileCase[] = [
  {
    name: "expired blockhash",
    reason: "stale",
    build: (env, bh) => {
      const tx = buildTransaction({
        payer: env.wallet,
        blockhash: bh.blockhash,
        instructions: [memo("late")],
      });
      env.chain.advanceSlots(bh.lastValidBlockHeight - env.chain.blockHeight + 2);
      return { tx, lastValidBlockHeight: bh.lastValidBlockHeight };
    },
  },
  {
    // Audit, medium: production left the RPC check off, so only the caller's height was compared.
    name: "blockhash the chain never issued, with a far-off lastValidBlockHeight (production policy defaults)",
    reason: "stale",
    detail: /does not accept the blockhash/,
    build: (env, bh) => ({
      tx: buildTransaction({
        payer: env.wallet,
        blockhash: Keypair.generate().publicKey.toBase58(),
        instructions: [memo("unknown blockhash")],
      }),
      lastValidBlockHeight: bh.lastValidBlockHeight + 100_000,
      policy: { checkBlockhashWithRpc: undefined },
    }),
  },
];

let env: SignerEnv;
beforeAll(async () => {
  env = await startSignerEnv("hostile");
  // The wrapped SOL mint as on mainnet (SPL Token, 9 decimals, no authority) and native accounts.
  if (env.chain.getAccount(WRAPPED_SOL_MINT) === null)
    env.chain.createMint({ address: WRAPPED_SOL_MINT, decimals: 9, authority: null });
  walletWsol = env.chain.mintTo(WRAPPED_SOL_MINT, env.wallet, 3n * BigInt(LAMPORTS_PER_SOL));
  strangerWsol = env.chain.mintTo(WRAPPED_SOL_MINT, env.stranger.publicKey, 0n);
});

/** The env's balances plus the wrapped SOL accounts (lamports, rent included). */
async function balances(): Promise<Record<string, string>> {
  return {
    ...(await env.balances()),
    walletWsol: env.chain.lamportsOf(walletWsol).toString(),
    strangerWsol: env.chain.lamportsOf(strangerWsol).toString(),
  };
}
afterAll(async () => {
  await env?.close();
});

describe("hostile corpus", () => {
  it("has at least 20 cases", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(20);
  });

  it.each(staleCases.map((c) => [c.name, c] as const))(
    "sends nothing, and asks for a fresh transaction (no refusal): %s",
    async (_name, hostile) => {
      const bh = await env.connection.getLatestBlockhash("confirmed");
      const built = await hostile.build(env, bh);
      const before = await balances();
      // The stale bytes passed the static rules and are signed in memory only, to ask the chain whether
      // a run whose record was lost landed them: never sent, never recorded.
      const send = vi.spyOn(env.connection, "sendRawTransaction");
      const intent = built.intent ?? env.claimIntent();
      const { logger } = captureLogger();
      try {
        const outcome = await signAndSubmit({
          intent,
          transactionBase64: built.base64 ?? toBase64(built.tx as VersionedTransaction),
          lastValidBlockHeight: built.lastValidBlockHeight ?? bh.lastValidBlockHeight,
          wallets: env.wallets,
          connection: env.connection,
          policyConfig: { ...env.policy, ...built.policy },
          attempts: env.attempts,
          logger,
        });
        expect(outcome).toEqual({ outcome: "expired", attempt: 1, resumed: false });
        expect(send).not.toHaveBeenCalled();
        expect(await env.attempts.get(intent.key)).toBeUndefined();
        expect(await balances()).toEqual(before);
      } finally {
        send.mockRestore();
      }
    },
  );

  it.each(corpus.map((c) => [c.name, c] as const))("refuses: %s", async (_name, hostile) => {
    const bh = await env.connection.getLatestBlockhash("confirmed");
    const built = await hostile.build(env, bh);
    const base64 = built.base64 ?? toBase64(built.tx as VersionedTransaction);
    const before = await balances();
    const sign = vi.spyOn(env.wallets, "sign");
    const sendRaw = vi.spyOn(env.connection, "sendRawTransaction");
    const sendEncoded = vi.spyOn(env.connection, "sendEncodedTransaction");
    const intent = built.intent ?? env.claimIntent();
    const { logger } = captureLogger();
    try {
      const outcome = await signAndSubmit({
        intent,
        transactionBase64: base64,
        lastValidBlockHeight: built.lastValidBlockHeight ?? bh.lastValidBlockHeight,
        wallets: env.wallets,
        connection: env.connection,
        policyConfig: { ...env.policy, ...built.policy },
        ...(built.inflow ? { inflow: built.inflow } : {}),
        attempts: env.attempts,
        logger,
      });
      expect(outcome).toMatchObject({ outcome: "refused", reason: hostile.reason });
      if (hostile.detail && outcome.outcome === "refused") expect(outcome.detail).toMatch(hostile.detail);
      expect(sign).not.toHaveBeenCalled();
      expect(sendRaw).not.toHaveBeenCalled();
      expect(sendEncoded).not.toHaveBeenCalled();
      const record = await env.attempts.get(intent.key);
      expect(record).toMatchObject({ status: "refused", reason: hostile.reason });
      expect(record?.signature).toBeUndefined();
      expect(record?.signedTransaction).toBeUndefined();
      expect(await balances()).toEqual(before);
    } finally {
      sign.mockRestore();
      sendRaw.mockRestore();
      sendEncoded.mockRestore();
    }
  });
});
