import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createInitializeAccount3Instruction,
  createMintToCheckedInstruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  ACCOUNT_SIZE as TOKEN_ACCOUNT_SIZE,
  TOKEN_PROGRAM_ID,
  NATIVE_MINT as WRAPPED_SOL_MINT,
} from "@solana/spl-token";
import {
  Keypair,
  LAMPORTS_PER_SOL,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectedInflow, type InflowExpectation } from "../../../src/chain/inflow-rules.js";
import type { PolicyConfig } from "../../../src/chain/policy.js";
import type { Intent } from "../../../src/core/intent.js";
import { signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { type SignerEnv, startSignerEnv, USDC_DECIMALS } from "./env.js";
import { captureLogger } from "./helpers.js";
import { createToken2022Mint, type MintExtension, T22_DECIMALS, thaw } from "./token-2022-mints.js";
import { buildTransaction, toBase64 } from "./tx-builders.js";

/**
 * Where the wallet's tokens go, on the local chain: what an order or swap spends may land only in the
 * wallet's own accounts or in accounts of program-derived addresses (an order's escrow, a pool's
 * vault); an order's deposit must reach its escrow; rent only for accounts of the mints the intent
 * receives or spends; no received Token-2022 mint with an extension that takes from holders; no durable
 * nonce. Each hostile case is refused with nothing signed and nothing moved; each legitimate one
 * lands, and what landed is checked.
 */
interface Built {
  tx: VersionedTransaction;
  intent: Intent;
  policy?: Partial<PolicyConfig>;
  inflow?: InflowExpectation;
  /** The order account the build named. */
  order?: PublicKey;
  /** Checks what landed (legitimate cases). */
  landed?: () => void;
}
interface Case {
  name: string;
  build: () => Promise<Built> | Built;
}
interface HostileCase extends Case {
  reason: string;
  detail: RegExp;
}

let env: SignerEnv;
let blockhash: string;
/** An allow-listed service program (the order and swap programs of the service). */
const serviceProgram = Keypair.generate().publicKey;
/** A program not on the allow-list. */
const foreignProgram = Keypair.generate().publicKey;
const issuer = Keypair.generate();
let walletWsol: PublicKey;
/** The pool's wrapped SOL vault. */
let poolWsol: PublicKey;
/** A pool's authority (a program-derived address with an account of the service program) and its vaults. */
let pool: PublicKey;
let poolUsdc: PublicKey;
let poolT22: PublicKey;
/** Token-2022 mints, each with one extension, their supply in the issuer's account. */
const t22 = {} as Record<
  | "fee"
  | "zeroFee"
  | "delegate"
  | "hook"
  | "confidential"
  | "allowedDelegate"
  | "nonTransferable"
  | "pausable"
  | "frozenByDefault",
  { mint: PublicKey; issuerAccount: PublicKey }
>;

const pda = (program: PublicKey) =>
  PublicKey.findProgramAddressSync([Keypair.generate().publicKey.toBuffer()], program)[0];
const tag = () => Math.random().toString(36).slice(2, 10);

function order(
  kind: "createTrigger" | "createRecurring",
  inputMint: PublicKey,
  amount: bigint,
  wallet = env.wallet,
): Intent {
  const base = {
    key: `${kind}-${tag()}`,
    wallet: wallet.toBase58(),
    strategy: "test",
    inputMint: inputMint.toBase58(),
    outputMint: env.t22.toBase58(),
  };
  return kind === "createTrigger"
    ? { ...base, kind, makingAmount: String(amount), takingAmount: "1" }
    : { ...base, kind, inAmount: String(amount), numberOfOrders: 2, intervalSeconds: 60 };
}

function swap(inputMint: PublicKey, outputMint: PublicKey, amount: bigint, wallet = env.wallet): Intent {
  return {
    key: `swap-${tag()}`,
    kind: "swap",
    wallet: wallet.toBase58(),
    strategy: "test",
    inputMint: inputMint.toBase58(),
    outputMint: outputMint.toBase58(),
    amount: String(amount),
  };
}

const usdcTransfer = (from: PublicKey, to: PublicKey, authority: PublicKey, amount: bigint) =>
  createTransferCheckedInstruction(from, env.usdc, to, authority, amount, USDC_DECIMALS);

/** Opens the escrow account of `owner` (off the curve) for `mint`, the wallet paying its rent. */
function escrowOf(owner: PublicKey, mint = env.usdc): { account: PublicKey; open: TransactionInstruction } {
  const account = getAssociatedTokenAddressSync(mint, owner, true);
  const open = createAssociatedTokenAccountIdempotentInstruction(env.wallet, account, owner, mint);
  return { account, open };
}

const tx = (instructions: TransactionInstruction[], coSigners: Keypair[] = []) =>
  buildTransaction({ payer: env.wallet, blockhash, instructions, coSigners });

/**
 * A swap of 1 USDC into the pool's vault whose output is a Token-2022 mint: the wallet's account of it
 * is opened and the issuer pays 1,000 into it (`transfer`), mints them there (`mint`: a token that no
 * transfer can move is sold that way) or, with `none`, pays nothing (a hook program that does not exist
 * would fail every transfer). `thaw`: the issuer first thaws the account (its mint's accounts start
 * frozen).
 */
function swapInto(
  which: keyof typeof t22,
  {
    deliver = "transfer",
    thaw: thawFirst = false,
  }: { deliver?: "transfer" | "mint" | "none"; thaw?: boolean } = {},
): Built {
  const { mint, issuerAccount } = t22[which];
  const account = getAssociatedTokenAddressSync(mint, env.wallet, false, TOKEN_2022_PROGRAM_ID);
  const delivery = {
    transfer: [
      createTransferCheckedInstruction(
        issuerAccount,
        mint,
        account,
        issuer.publicKey,
        1_000n,
        T22_DECIMALS,
        [],
        TOKEN_2022_PROGRAM_ID,
      ),
    ],
    mint: [
      createMintToCheckedInstruction(
        mint,
        account,
        issuer.publicKey,
        1_000n,
        T22_DECIMALS,
        [],
        TOKEN_2022_PROGRAM_ID,
      ),
    ],
    none: [],
  }[deliver];
  return {
    intent: swap(env.usdc, mint, 1_000_000n),
    tx: tx(
      [
        usdcTransfer(env.walletUsdc, poolUsdc, env.wallet, 1_000_000n),
        createAssociatedTokenAccountIdempotentInstruction(
          env.wallet,
          account,
          env.wallet,
          mint,
          TOKEN_2022_PROGRAM_ID,
        ),
        ...(thawFirst ? [thaw(account, mint, issuer.publicKey)] : []),
        ...delivery,
      ],
      delivery.length > 0 || thawFirst ? [issuer] : [],
    ),
  };
}

/** A claim of 5 USDC by the vault that also opens the wallet's accounts of `mints` (paid by the wallet). */
function claimOpening(wallet: PublicKey, mints: PublicKey[]): Built {
  const payoutAccount = getAssociatedTokenAddressSync(env.usdc, wallet);
  const intent = { ...env.claimIntent(), wallet: wallet.toBase58() } as Intent;
  return {
    intent,
    tx: buildTransaction({
      payer: wallet,
      blockhash,
      coSigners: [env.vault],
      instructions: [
        ...[env.usdc, ...mints].map((mint) =>
          createAssociatedTokenAccountIdempotentInstruction(
            wallet,
            getAssociatedTokenAddressSync(mint, wallet),
            wallet,
            mint,
          ),
        ),
        usdcTransfer(env.vaultUsdc, payoutAccount, env.vault.publicKey, 5_000_000n),
      ],
    }),
  };
}

/** Lamports someone sent to an address before the wallet's account opened there (anyone can). */
const PREFUND_LAMPORTS = 1_000_000n;

/**
 * A new mint with `holder`'s account of it holding 1,000,000, and the wallet's associated token
 * address for it, pre-funded: the associated token program opens the account there with a System
 * transfer of the rent it lacks (then allocate and assign), not createAccount.
 */
function prefundedMint(holder: PublicKey): { mint: PublicKey; holderAccount: PublicKey; account: PublicKey } {
  const mint = env.chain.createMint({
    address: Keypair.generate(),
    decimals: 6,
    authority: issuer.publicKey,
  });
  const holderAccount = env.chain.mintTo(mint, holder, 1_000_000n);
  const account = getAssociatedTokenAddressSync(mint, env.wallet);
  env.chain.airdrop(account, PREFUND_LAMPORTS);
  return { mint, holderAccount, account };
}

/**
 * A claim paying 1,000 of a second payout mint (a JupUSD) into the wallet's new account of it, at an
 * address someone pre-funded; `extra` runs after the account opens.
 */
function claimIntoPrefunded(extra: (account: PublicKey) => TransactionInstruction[] = () => []): Built {
  const { mint, holderAccount, account } = prefundedMint(env.vault.publicKey);
  return {
    intent: env.claimIntent(),
    policy: { payoutMints: [env.usdc.toBase58(), mint.toBase58()] },
    tx: tx(
      [
        createAssociatedTokenAccountIdempotentInstruction(env.wallet, account, env.wallet, mint),
        createTransferCheckedInstruction(holderAccount, mint, account, env.vault.publicKey, 1_000n, 6),
        ...extra(account),
      ],
      [env.vault],
    ),
  };
}

/** Lamports a stranger sent to the second wallet's wrapped SOL address before its account opened. */
const PREFUND_WSOL_LAMPORTS = 1_000n;
/** What the pre-funded wrapped SOL account lacks of a token account's rent (2,039,280). */
const WSOL_RENT_LACKED = 2_039_280n - PREFUND_WSOL_LAMPORTS;
/** What a SOL-input swap or order below spends: 0.1 SOL. */
const SOL_INPUT = BigInt(LAMPORTS_PER_SOL / 10);

/**
 * The second wallet's wrapped SOL address, holding only the lamports a stranger sent there: set for
 * each case (one that lands leaves an account there). The associated token program opens the account
 * with a System transfer of the rent it lacks, from the wallet, on top of the transfer that wraps.
 */
function prefundedWsol(): PublicKey {
  const account = getAssociatedTokenAddressSync(WRAPPED_SOL_MINT, env.otherWallet);
  env.chain.setAccount({
    address: account,
    lamports: PREFUND_WSOL_LAMPORTS,
    owner: SystemProgram.programId,
    data: new Uint8Array(0),
  });
  return account;
}

/** Opens the second wallet's wrapped SOL account at `account`, pays `lamports` into it and syncs it. */
function wrapInto(account: PublicKey, lamports: bigint): TransactionInstruction[] {
  const wallet = env.otherWallet;
  return [
    createAssociatedTokenAccountIdempotentInstruction(wallet, account, wallet, WRAPPED_SOL_MINT),
    SystemProgram.transfer({ fromPubkey: wallet, toPubkey: account, lamports }),
    createSyncNativeInstruction(account),
  ];
}

/**
 * A swap of SOL_INPUT SOL into 995 USDC for the second wallet, as the service builds one: `wrap` fills
 * its wrapped SOL account (at a pre-funded address), which pays the pool's vault and closes back to
 * the wallet; the vault pays the USDC into the wallet's USDC account.
 */
function solSwap(wrap: (account: PublicKey) => TransactionInstruction[]): Built & { wsol: PublicKey } {
  const wallet = env.otherWallet;
  const wsol = prefundedWsol();
  const walletUsdc = getAssociatedTokenAddressSync(env.usdc, wallet);
  const intent = swap(WRAPPED_SOL_MINT, env.usdc, SOL_INPUT, wallet);
  return {
    wsol,
    intent,
    inflow: expectedInflow(intent, { minInflowRaw: "990" }, inflowOptions()),
    tx: buildTransaction({
      payer: wallet,
      blockhash,
      coSigners: [env.vault],
      instructions: [
        ...wrap(wsol),
        createTransferCheckedInstruction(wsol, WRAPPED_SOL_MINT, poolWsol, wallet, SOL_INPUT, 9),
        createAssociatedTokenAccountIdempotentInstruction(wallet, walletUsdc, wallet, env.usdc),
        usdcTransfer(env.vaultUsdc, walletUsdc, env.vault.publicKey, 995n),
        createCloseAccountInstruction(wsol, wallet, wallet),
      ],
    }),
  };
}

const rentOfTokenAccount = () => env.chain.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE);

const hostile: HostileCase[] = [
  {
    name: "order whose whole making amount goes into a stranger's token account",
    reason: "outflow_destination",
    detail:
      /transferChecked sends 5000000 of mint \w+ from the wallet's \w+ to \w+, whose authority \w+ is another wallet/,
    build: () => ({
      intent: order("createTrigger", env.usdc, 5_000_000n),
      tx: tx([usdcTransfer(env.walletUsdc, env.strangerUsdc, env.wallet, 5_000_000n)]),
    }),
  },
  {
    name: "order split: half into its escrow, half into a stranger's token account",
    reason: "outflow_destination",
    detail: /instruction 2: transferChecked sends 2500000 of mint \w+ .* is another wallet/,
    build: () => {
      const orderAccount = pda(serviceProgram);
      const escrow = escrowOf(orderAccount);
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        order: orderAccount,
        tx: tx([
          escrow.open,
          usdcTransfer(env.walletUsdc, escrow.account, env.wallet, 2_500_000n),
          usdcTransfer(env.walletUsdc, env.strangerUsdc, env.wallet, 2_500_000n),
        ]),
      };
    },
  },
  {
    name: "recurring order whose deposit goes into a stranger's new token account",
    reason: "outflow_destination",
    detail: /sends 3000000 of mint \w+ .* is another wallet/,
    build: () => {
      const account = escrowOf(env.freshOwner);
      return {
        intent: order("createRecurring", env.usdc, 3_000_000n),
        tx: tx([account.open, usdcTransfer(env.walletUsdc, account.account, env.wallet, 3_000_000n)]),
      };
    },
  },
  {
    name: "swap whose input goes into a stranger's token account",
    reason: "outflow_destination",
    detail: /instruction 0: transferChecked sends 1000 of mint \w+ .* is another wallet/,
    build: () => ({
      intent: swap(env.t22, env.usdc, 1_000n),
      tx: tx(
        [
          createTransferCheckedInstruction(
            env.walletT22,
            env.t22,
            env.strangerT22,
            env.wallet,
            1_000n,
            6,
            [],
            TOKEN_2022_PROGRAM_ID,
          ),
          usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 995n),
        ],
        [env.vault],
      ),
    }),
  },
  {
    name: "order whose escrow's authority is an account of a program not on the allow-list",
    reason: "outflow_destination",
    detail: new RegExp(`is an account of ${foreignProgram.toBase58()}, a program not on the allow-list`),
    build: () => {
      const foreignAuthority = pda(foreignProgram);
      env.chain.setAccount({
        address: foreignAuthority,
        lamports: 1_000_000n,
        owner: foreignProgram,
        data: new Uint8Array(8),
      });
      const escrow = escrowOf(foreignAuthority);
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        tx: tx([escrow.open, usdcTransfer(env.walletUsdc, escrow.account, env.wallet, 5_000_000n)]),
      };
    },
  },
  {
    name: "order whose deposit goes into another order's escrow than the one the build named",
    reason: "escrow_short",
    detail:
      /^simulation: 0 of mint \w+ arrives in the order \w+'s token accounts, the order deposits 5000000$/,
    build: () => {
      const named = pda(serviceProgram);
      const other = escrowOf(pda(serviceProgram));
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        order: named,
        tx: tx([other.open, usdcTransfer(env.walletUsdc, other.account, env.wallet, 5_000_000n)]),
      };
    },
  },
  {
    name: "order whose deposit stays in a new token account of the wallet",
    reason: "escrow_short",
    detail:
      /^simulation: 0 of mint \w+ arrives in token accounts of an off-curve authority \(an escrow\), the order deposits 5000000$/,
    build: () => {
      const account = Keypair.generate();
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        tx: tx(
          [
            SystemProgram.createAccount({
              fromPubkey: env.wallet,
              newAccountPubkey: account.publicKey,
              lamports: Number(env.chain.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE)),
              space: TOKEN_ACCOUNT_SIZE,
              programId: TOKEN_PROGRAM_ID,
            }),
            createInitializeAccount3Instruction(account.publicKey, env.usdc, env.wallet),
            usdcTransfer(env.walletUsdc, account.publicKey, env.wallet, 5_000_000n),
          ],
          [account],
        ),
      };
    },
  },
  {
    name: "order depositing less than its amount into its escrow",
    reason: "escrow_short",
    detail:
      /^simulation: 4999999 of mint \w+ arrives in the order \w+'s token accounts, the order deposits 5000000$/,
    build: () => {
      const orderAccount = pda(serviceProgram);
      const escrow = escrowOf(orderAccount);
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        order: orderAccount,
        tx: tx([escrow.open, usdcTransfer(env.walletUsdc, escrow.account, env.wallet, 4_999_999n)]),
      };
    },
  },
  {
    name: "claim that also opens the wallet's accounts of three mints it does not pay in (junk rent)",
    reason: "outflow_sol",
    detail:
      /System createAccount funds \w+ a new token account of the wallet for mint \w+, which the intent neither receives nor spends; 2039280 lamports in all into such accounts, allowed 0/,
    build: () => {
      const junk = [0, 1, 2].map(() =>
        env.chain.createMint({ address: Keypair.generate(), decimals: 0, authority: issuer.publicKey }),
      );
      return claimOpening(env.wallet, junk);
    },
  },
  {
    name: "swap into a Token-2022 mint with a 1% transfer fee",
    reason: "mint_extension",
    detail:
      /Token-2022 mint \w+ with TransferFeeConfig 100 bps up to 1000000000 \(from epoch \d+\); not in signer.allowedToken2022Mints/,
    build: () => swapInto("fee"),
  },
  {
    name: "swap into a Token-2022 mint with a permanent delegate",
    reason: "mint_extension",
    detail: new RegExp(`with PermanentDelegate ${issuer.publicKey.toBase58()};`),
    build: () => swapInto("delegate"),
  },
  {
    name: "swap into a Token-2022 mint with a transfer hook (the wallet's account opened, nothing paid)",
    reason: "mint_extension",
    detail: /with TransferHook program \w+;/,
    build: () => swapInto("hook", { deliver: "none" }),
  },
  {
    name: "swap into a Token-2022 mint with confidential transfers",
    reason: "mint_extension",
    detail: /with ConfidentialTransferMint;/,
    build: () => swapInto("confidential"),
  },
  {
    name: "buy of a non-transferable Token-2022 mint (minted into the wallet's account: it could never be sold)",
    reason: "mint_extension",
    detail: /with NonTransferable;/,
    build: () => swapInto("nonTransferable", { deliver: "mint" }),
  },
  {
    name: "swap into a Token-2022 mint its authority can pause",
    reason: "mint_extension",
    detail: new RegExp(`with Pausable by ${issuer.publicKey.toBase58()};`),
    build: () => swapInto("pausable"),
  },
  {
    name: "swap into a Token-2022 mint whose accounts start frozen (the issuer thaws the wallet's)",
    reason: "mint_extension",
    detail: /with DefaultAccountState frozen;/,
    build: () => swapInto("frozenByDefault", { thaw: true }),
  },
  {
    name: "claim opening its payout account at a pre-funded address that also pays 1 SOL into it",
    reason: "outflow_sol",
    detail: new RegExp(
      `^instruction 2: System transfer pays ${1_039_280 + LAMPORTS_PER_SOL} lamports in all into \\w+, the wallet's token account of mint \\w+, which lacked 1039280 of its rent$`,
    ),
    build: () =>
      claimIntoPrefunded((account) => [
        SystemProgram.transfer({ fromPubkey: env.wallet, toPubkey: account, lamports: LAMPORTS_PER_SOL }),
      ]),
  },
  {
    name: "claim that also pays rent-sized lamports into the wallet's existing USDC account",
    reason: "outflow_sol",
    detail:
      /^instruction 1: System transfer pays 2039280 lamports in all into \w+, the wallet's token account of mint \w+, which lacked 0 of its rent$/,
    build: () => ({
      intent: env.claimIntent(),
      tx: tx(
        [
          usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 1_000_000n),
          SystemProgram.transfer({
            fromPubkey: env.wallet,
            toPubkey: env.walletUsdc,
            lamports: Number(rentOfTokenAccount()),
          }),
        ],
        [env.vault],
      ),
    }),
  },
  {
    name: "claim that also pays rent-sized lamports into a stranger's token account",
    reason: "outflow_sol",
    detail: /^instruction 1: System transfer sends 2039280 lamports from the wallet in all, allowed 0$/,
    build: () => ({
      intent: env.claimIntent(),
      tx: tx(
        [
          usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 1_000_000n),
          SystemProgram.transfer({
            fromPubkey: env.wallet,
            toPubkey: env.strangerUsdc,
            lamports: Number(rentOfTokenAccount()),
          }),
        ],
        [env.vault],
      ),
    }),
  },
  {
    name: "claim that also opens the wallet's account of a mint it does not pay in, at a pre-funded address",
    reason: "outflow_sol",
    detail:
      /System transfer funds \w+ a new token account of the wallet for mint \w+, which the intent neither receives nor spends; 1039280 lamports in all into such accounts, allowed 0/,
    build: () => {
      const { mint, account } = prefundedMint(issuer.publicKey);
      return {
        intent: env.claimIntent(),
        tx: tx(
          [
            usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 1_000_000n),
            createAssociatedTokenAccountIdempotentInstruction(env.wallet, account, env.wallet, mint),
          ],
          [env.vault],
        ),
      };
    },
  },
  {
    name: "SOL-input swap at a pre-funded wrapped SOL address that wraps one lamport more than its amount",
    reason: "outflow_sol",
    detail: new RegExp(
      `^instruction 1: System transfer sends ${SOL_INPUT + 1n} lamports from the wallet in all, allowed ${SOL_INPUT}$`,
    ),
    build: () => solSwap((wsol) => wrapInto(wsol, SOL_INPUT + 1n)),
  },
  {
    name: "SOL-input swap paying the pre-funded wrapped SOL address its rent and one lamport more than its amount",
    reason: "outflow_sol",
    detail: new RegExp(
      `^instruction 0: System transfer sends ${WSOL_RENT_LACKED + SOL_INPUT + 1n} lamports from the wallet in all, allowed ${SOL_INPUT}$`,
    ),
    build: () =>
      solSwap((wsol) => {
        const wallet = env.otherWallet;
        const lamports = WSOL_RENT_LACKED + SOL_INPUT + 1n;
        return [
          SystemProgram.transfer({ fromPubkey: wallet, toPubkey: wsol, lamports }),
          createAssociatedTokenAccountIdempotentInstruction(wallet, wsol, wallet, WRAPPED_SOL_MINT),
          createSyncNativeInstruction(wsol),
        ];
      }),
  },
  {
    name: "claim that also opens the wallet's wrapped SOL account (no payout mint) at a pre-funded address",
    reason: "outflow_sol",
    detail: new RegExp(
      `^instruction 1\\.1: System transfer funds \\w+ a new token account of the wallet for mint ${WRAPPED_SOL_MINT.toBase58()}, which the intent neither receives nor spends; ${WSOL_RENT_LACKED} lamports in all into such accounts, allowed 0$`,
    ),
    build: () => {
      prefundedWsol();
      return claimOpening(env.otherWallet, [WRAPPED_SOL_MINT]);
    },
  },
  {
    name: "durable nonce: its blockhash is the nonce, which the node never issued (refused, not stale)",
    reason: "durable_nonce",
    detail: /^instruction 0: System advanceNonce$/,
    build: async () => {
      const nonce = Keypair.generate();
      const create = SystemProgram.createNonceAccount({
        fromPubkey: issuer.publicKey,
        noncePubkey: nonce.publicKey,
        authorizedPubkey: env.wallet,
        lamports: Number(env.chain.minimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH)),
      });
      const setup = buildTransaction({
        payer: issuer.publicKey,
        blockhash,
        instructions: create.instructions,
      });
      setup.sign([issuer, nonce]);
      env.chain.send(setup.serialize());
      const data = (await env.connection.getAccountInfo(nonce.publicKey))?.data;
      if (!data) throw new Error("nonce account not created");
      const nonceValue = NonceAccount.fromAccountData(data).nonce;
      return {
        intent: env.claimIntent(),
        tx: buildTransaction({
          payer: env.wallet,
          blockhash: nonceValue,
          coSigners: [env.vault],
          instructions: [
            SystemProgram.nonceAdvance({ noncePubkey: nonce.publicKey, authorizedPubkey: env.wallet }),
            usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 1_000_000n),
          ],
        }),
      };
    },
  },
];

const legitimate: Case[] = [
  {
    name: "trigger order depositing into the escrow account of its order (a program-derived address)",
    build: () => {
      const orderAccount = pda(serviceProgram);
      const escrow = escrowOf(orderAccount);
      const before = usdcOf(env.walletUsdc);
      return {
        intent: order("createTrigger", env.usdc, 5_000_000n),
        order: orderAccount,
        tx: tx([escrow.open, usdcTransfer(env.walletUsdc, escrow.account, env.wallet, 5_000_000n)]),
        landed: () => {
          expect(usdcOf(escrow.account)).toBe(5_000_000n);
          expect(usdcOf(env.walletUsdc)).toBe(before - 5_000_000n);
        },
      };
    },
  },
  {
    name: "recurring order in wrapped SOL: wrapped into the wallet's account, then into the order's escrow",
    build: () => {
      const amount = BigInt(LAMPORTS_PER_SOL / 10);
      const escrow = escrowOf(pda(serviceProgram), WRAPPED_SOL_MINT);
      const before = env.chain.tokenAccount(walletWsol)?.amount ?? 0n;
      return {
        intent: order("createRecurring", WRAPPED_SOL_MINT, amount),
        tx: tx([
          SystemProgram.transfer({ fromPubkey: env.wallet, toPubkey: walletWsol, lamports: amount }),
          createSyncNativeInstruction(walletWsol),
          escrow.open,
          createTransferCheckedInstruction(
            walletWsol,
            WRAPPED_SOL_MINT,
            escrow.account,
            env.wallet,
            amount,
            9,
          ),
        ]),
        landed: () => {
          expect(env.chain.tokenAccount(escrow.account)?.amount).toBe(amount);
          expect(env.chain.tokenAccount(walletWsol)?.amount).toBe(before);
        },
      };
    },
  },
  {
    name: "swap whose input goes into a pool's vault (a program's address) and whose output comes back",
    build: () => {
      const intent = swap(env.t22, env.usdc, 1_000n);
      const t22Before = env.chain.tokenAccount(env.walletT22)?.amount ?? 0n;
      const usdcBefore = usdcOf(env.walletUsdc);
      return {
        intent,
        inflow: expectedInflow(intent, { minInflowRaw: "990" }, inflowOptions()),
        tx: tx(
          [
            createTransferCheckedInstruction(
              env.walletT22,
              env.t22,
              poolT22,
              env.wallet,
              1_000n,
              6,
              [],
              TOKEN_2022_PROGRAM_ID,
            ),
            usdcTransfer(env.vaultUsdc, env.walletUsdc, env.vault.publicKey, 995n),
          ],
          [env.vault],
        ),
        landed: () => {
          expect(env.chain.tokenAccount(env.walletT22)?.amount).toBe(t22Before - 1_000n);
          expect(env.chain.tokenAccount(poolT22)?.amount).toBe(1_000n);
          expect(usdcOf(env.walletUsdc)).toBe(usdcBefore + 995n);
        },
      };
    },
  },
  {
    name: "claim that opens the wallet's USDC account (a payout mint) for its payout",
    build: () => {
      const built = claimOpening(env.otherWallet, []);
      const account = getAssociatedTokenAddressSync(env.usdc, env.otherWallet);
      expect(env.chain.getAccount(account)).toBeNull();
      return { ...built, landed: () => expect(usdcOf(account)).toBe(5_000_000n) };
    },
  },
  {
    // Someone sent lamports to the address first: the associated token program pays the rest of the
    // rent by System transfer, which is rent, not SOL wrapped (a claim wraps none).
    name: "claim that opens the wallet's account of a payout mint at an address someone pre-funded",
    build: () => {
      const built = claimIntoPrefunded();
      const account = getAssociatedTokenAddressSync(
        new PublicKey(built.policy?.payoutMints?.[1] as string),
        env.wallet,
      );
      expect(BigInt(env.chain.lamportsOf(account))).toBe(PREFUND_LAMPORTS);
      return {
        ...built,
        landed: () => {
          expect(env.chain.tokenAccount(account)?.amount).toBe(1_000n);
          expect(BigInt(env.chain.lamportsOf(account))).toBe(rentOfTokenAccount());
        },
      };
    },
  },
  {
    name: "swap whose output account opens at an address someone pre-funded",
    build: () => {
      const { mint, holderAccount, account } = prefundedMint(issuer.publicKey);
      const intent = swap(env.usdc, mint, 1_000_000n);
      const usdcBefore = usdcOf(env.walletUsdc);
      return {
        intent,
        inflow: expectedInflow(intent, { minInflowRaw: "990" }, inflowOptions()),
        tx: tx(
          [
            usdcTransfer(env.walletUsdc, poolUsdc, env.wallet, 1_000_000n),
            createAssociatedTokenAccountIdempotentInstruction(env.wallet, account, env.wallet, mint),
            createTransferCheckedInstruction(holderAccount, mint, account, issuer.publicKey, 1_000n, 6),
          ],
          [issuer],
        ),
        landed: () => {
          expect(env.chain.tokenAccount(account)?.amount).toBe(1_000n);
          expect(BigInt(env.chain.lamportsOf(account))).toBe(rentOfTokenAccount());
          expect(usdcOf(env.walletUsdc)).toBe(usdcBefore - 1_000_000n);
        },
      };
    },
  },
  {
    // The associated token program pays the rent the pre-funded address lacks by System transfer: rent
    // the wallet gets back when the account closes, not SOL the swap wraps.
    name: "SOL-input swap whose wrapped SOL account opens at an address someone pre-funded (then closes)",
    build: () => {
      const built = solSwap((wsol) => wrapInto(wsol, SOL_INPUT));
      const wallet = env.otherWallet;
      const walletUsdc = getAssociatedTokenAddressSync(env.usdc, wallet);
      const usdcRent = env.chain.getAccount(walletUsdc) === null ? rentOfTokenAccount() : 0n;
      const usdcBefore = env.chain.tokenAccount(walletUsdc)?.amount ?? 0n;
      const solBefore = BigInt(env.chain.lamportsOf(wallet));
      const poolBefore = env.chain.tokenAccount(poolWsol)?.amount ?? 0n;
      return {
        ...built,
        landed: () => {
          expect(env.chain.getAccount(built.wsol)).toBeNull();
          expect(env.chain.tokenAccount(poolWsol)?.amount).toBe(poolBefore + SOL_INPUT);
          expect(usdcOf(walletUsdc)).toBe(usdcBefore + 995n);
          // The wallet paid the input, two signatures' fee and its USDC account's rent if new, and got
          // the wrapped SOL account's rent back with the stranger's lamports.
          expect(BigInt(env.chain.lamportsOf(wallet))).toBe(
            solBefore - SOL_INPUT - 10_000n - usdcRent + PREFUND_WSOL_LAMPORTS,
          );
        },
      };
    },
  },
  {
    name: "SOL trigger order whose wrapped SOL account opens at an address someone pre-funded (left open)",
    build: () => {
      const wallet = env.otherWallet;
      const wsol = prefundedWsol();
      const orderAccount = pda(serviceProgram);
      const escrow = escrowOf(orderAccount, WRAPPED_SOL_MINT);
      return {
        intent: order("createTrigger", WRAPPED_SOL_MINT, SOL_INPUT, wallet),
        order: orderAccount,
        tx: buildTransaction({
          payer: wallet,
          blockhash,
          instructions: [
            ...wrapInto(wsol, SOL_INPUT),
            createAssociatedTokenAccountIdempotentInstruction(
              wallet,
              escrow.account,
              orderAccount,
              WRAPPED_SOL_MINT,
            ),
            createTransferCheckedInstruction(wsol, WRAPPED_SOL_MINT, escrow.account, wallet, SOL_INPUT, 9),
          ],
        }),
        landed: () => {
          expect(env.chain.tokenAccount(escrow.account)?.amount).toBe(SOL_INPUT);
          expect(env.chain.tokenAccount(wsol)?.amount).toBe(0n);
          expect(BigInt(env.chain.lamportsOf(wsol))).toBe(rentOfTokenAccount());
        },
      };
    },
  },
  {
    name: "swap into a Token-2022 mint whose extensions take nothing (a close authority, a transfer fee of 0)",
    build: () => landsInWallet(swapInto("zeroFee"), "zeroFee"),
  },
  {
    name: "swap into a Token-2022 mint with a permanent delegate that the operator allows",
    build: () => {
      const built = swapInto("allowedDelegate");
      return landsInWallet(
        { ...built, policy: { allowedToken2022Mints: [t22.allowedDelegate.mint.toBase58()] } },
        "allowedDelegate",
      );
    },
  },
];

function usdcOf(account: PublicKey): bigint {
  return env.chain.tokenAccount(account)?.amount ?? -1n;
}

function inflowOptions() {
  return { payoutMints: [env.usdc.toBase58()], toleranceBps: 50 };
}

/** The swap lands: the wallet holds the 1,000 the issuer paid of the Token-2022 mint. */
function landsInWallet(built: Built, which: keyof typeof t22): Built {
  const account = getAssociatedTokenAddressSync(t22[which].mint, env.wallet, false, TOKEN_2022_PROGRAM_ID);
  return { ...built, landed: () => expect(env.chain.tokenAccount(account)?.amount).toBe(1_000n) };
}

/** The wallet's and the stranger's balances, and every token account of the wallet's. */
async function balances(): Promise<Record<string, string>> {
  const tracked: Record<string, string> = {
    ...(await env.balances()),
    wsol: String(env.chain.lamportsOf(walletWsol)),
    strangerUsdc: String(usdcOf(env.strangerUsdc)),
    otherWalletSol: String(env.chain.lamportsOf(env.otherWallet)),
  };
  for (const owner of [env.wallet, env.otherWallet]) {
    for (const { pubkey, account } of (
      await env.connection.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ID })
    ).value.concat(
      (await env.connection.getTokenAccountsByOwner(owner, { programId: TOKEN_2022_PROGRAM_ID })).value,
    )) {
      tracked[pubkey.toBase58()] = `${account.lamports}:${account.data.subarray(64, 72).toString("hex")}`;
    }
  }
  return tracked;
}

beforeAll(async () => {
  env = await startSignerEnv("destinations");
  env.chain.airdrop(issuer.publicKey, 100n * BigInt(LAMPORTS_PER_SOL));
  if (env.chain.getAccount(WRAPPED_SOL_MINT) === null)
    env.chain.createMint({ address: WRAPPED_SOL_MINT, decimals: 9, authority: null });
  walletWsol = env.chain.mintTo(WRAPPED_SOL_MINT, env.wallet, 0n);
  pool = pda(serviceProgram);
  env.chain.setAccount({
    address: pool,
    lamports: 1_000_000n,
    owner: serviceProgram,
    data: new Uint8Array(8),
  });
  poolUsdc = env.chain.mintTo(env.usdc, pool, 0n);
  poolT22 = env.chain.mintTo(env.t22, pool, 0n);
  poolWsol = env.chain.mintTo(WRAPPED_SOL_MINT, pool, 0n);
  const made = async (extensions: MintExtension[]) =>
    createToken2022Mint(env, issuer, extensions, 1_000_000n);
  t22.fee = await made([{ kind: "transferFee", basisPoints: 100, maximumFee: 1_000_000_000n }]);
  t22.zeroFee = await made([
    { kind: "closeAuthority", authority: issuer.publicKey },
    { kind: "transferFee", basisPoints: 0, maximumFee: 0n },
  ]);
  t22.delegate = await made([{ kind: "permanentDelegate", delegate: issuer.publicKey }]);
  t22.allowedDelegate = await made([{ kind: "permanentDelegate", delegate: issuer.publicKey }]);
  t22.hook = await made([{ kind: "transferHook", program: Keypair.generate().publicKey }]);
  t22.confidential = await made([{ kind: "confidentialTransfer" }]);
  t22.nonTransferable = await made([{ kind: "nonTransferable" }]);
  t22.pausable = await made([{ kind: "pausable", authority: issuer.publicKey }]);
  t22.frozenByDefault = await made([{ kind: "defaultFrozen" }]);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

async function submit(built: Built, lastValidBlockHeight: number) {
  const { logger } = captureLogger();
  return signAndSubmit({
    intent: built.intent,
    transactionBase64: toBase64(built.tx),
    lastValidBlockHeight,
    wallets: env.wallets,
    connection: env.connection,
    policyConfig: { ...env.policy, extraPrograms: [serviceProgram.toBase58()], ...built.policy },
    ...(built.inflow ? { inflow: built.inflow } : {}),
    ...(built.order ? { order: built.order.toBase58() } : {}),
    attempts: env.attempts,
    logger,
  });
}

describe("where the wallet's tokens go", () => {
  it.each(hostile.map((c) => [c.name, c] as const))("refuses: %s", async (_name, hostileCase) => {
    const latest = await env.connection.getLatestBlockhash("confirmed");
    blockhash = latest.blockhash;
    const built = await hostileCase.build();
    const before = await balances();
    const sign = vi.spyOn(env.wallets, "sign");
    const sendRaw = vi.spyOn(env.connection, "sendRawTransaction");
    try {
      const outcome = await submit(built, latest.lastValidBlockHeight);
      expect(outcome).toMatchObject({ outcome: "refused", reason: hostileCase.reason });
      if (outcome.outcome === "refused") expect(outcome.detail).toMatch(hostileCase.detail);
      expect(sign).not.toHaveBeenCalled();
      expect(sendRaw).not.toHaveBeenCalled();
      expect(await env.attempts.get(built.intent.key)).toMatchObject({
        status: "refused",
        reason: hostileCase.reason,
      });
      expect(await balances()).toEqual(before);
    } finally {
      sign.mockRestore();
      sendRaw.mockRestore();
    }
  });

  it.each(legitimate.map((c) => [c.name, c] as const))(
    "signs and lands: %s",
    async (_name, legitimateCase) => {
      const latest = await env.connection.getLatestBlockhash("confirmed");
      blockhash = latest.blockhash;
      const built = await legitimateCase.build();
      const outcome = await submit(built, latest.lastValidBlockHeight);
      expect(outcome).toMatchObject({ outcome: "confirmed" });
      built.landed?.();
    },
  );
});
