import type { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import type {
  ChainAccount,
  CompiledInnerInstruction,
  InnerInstructionGroup,
  TokenBalanceEntry,
} from "./local-chain.js";
import { decodeMint, decodeTokenAccount, isTokenProgram, uiAmountString } from "./token-state.js";

export type AccountEncoding = "base64" | "base58" | "jsonParsed" | "base64+zstd";

/** Rent epoch of rent-exempt accounts; kept at 0 because u64::MAX does not survive a JSON number. */
const RENT_EPOCH = 0;

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
}

/** jsonParsed data for token accounts and mints; other accounts fall back to base64, as nodes do. */
function parsedData(account: ChainAccount, decimalsOf: (mint: PublicKey) => number | undefined): unknown {
  if (!isTokenProgram(account.owner)) return undefined;
  const token = decodeTokenAccount(account.data);
  if (token !== undefined) {
    return {
      program: "spl-token",
      parsed: {
        type: "account",
        info: {
          isNative: false,
          mint: token.mint.toBase58(),
          owner: token.owner.toBase58(),
          state: "initialized",
          tokenAmount: uiTokenAmount(token.amount, decimalsOf(token.mint) ?? 0),
        },
      },
      space: account.data.length,
    };
  }
  const mint = decodeMint(account.data);
  if (mint === undefined) return undefined;
  return {
    program: "spl-token",
    parsed: {
      type: "mint",
      info: {
        decimals: mint.decimals,
        freezeAuthority: null,
        isInitialized: true,
        mintAuthority: mint.mintAuthority?.toBase58() ?? null,
        supply: mint.supply.toString(),
      },
    },
    space: account.data.length,
  };
}

export function encodeAccount(
  account: ChainAccount | null,
  encoding: AccountEncoding,
  decimalsOf: (mint: PublicKey) => number | undefined,
): unknown {
  if (account === null) return null;
  let data: unknown;
  if (encoding === "jsonParsed") data = parsedData(account, decimalsOf);
  if (data === undefined) {
    data =
      encoding === "base58"
        ? [bs58.encode(account.data), "base58"]
        : [Buffer.from(account.data).toString("base64"), "base64"];
  }
  return {
    data,
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: account.owner.toBase58(),
    rentEpoch: RENT_EPOCH,
    space: account.data.length,
  };
}

/** getTransaction's `json` form: indices into the account key list. */
export function compiledInnerJson(groups: readonly InnerInstructionGroup[]): unknown[] {
  return groups.map((group) => ({
    index: group.index,
    instructions: group.instructions.map((ix: CompiledInnerInstruction) => ({
      programIdIndex: ix.programIdIndex,
      accounts: [...ix.accounts],
      data: bs58.encode(ix.data),
      stackHeight: ix.stackHeight,
    })),
  }));
}

/**
 * simulateTransaction's form: program and accounts as addresses (what agave returns for programs it
 * does not parse, and what web3.js's `PartiallyDecodedInstruction` schema accepts), plus the compiled
 * `programIdIndex` and `stackHeight` for callers that want them.
 */
export function decodedInnerJson(
  groups: readonly InnerInstructionGroup[],
  keys: readonly PublicKey[],
): unknown[] {
  const address = (index: number): string => keys[index]?.toBase58() ?? "";
  return groups.map((group) => ({
    index: group.index,
    instructions: group.instructions.map((ix) => ({
      programId: address(ix.programIdIndex),
      programIdIndex: ix.programIdIndex,
      accounts: ix.accounts.map(address),
      data: bs58.encode(ix.data),
      stackHeight: ix.stackHeight,
    })),
  }));
}

export function tokenBalancesJson(entries: readonly TokenBalanceEntry[]): unknown[] {
  return entries.map((entry) => ({
    accountIndex: entry.accountIndex,
    mint: entry.mint,
    owner: entry.owner,
    programId: entry.programId,
    uiTokenAmount: uiTokenAmount(entry.amount, entry.decimals),
  }));
}
