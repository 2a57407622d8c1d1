import { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { ASSOCIATED_TOKEN_PROGRAM, isTokenProgram, SYSTEM_PROGRAM } from "./programs.js";

/**
 * One instruction, top-level or inner, reduced to what the policy reasons about: the operation (named
 * as the RPC's jsonParsed output names it) and its accounts by role. Raw instructions (bytes) and
 * parsed ones (what an RPC returns for inner instructions of known programs) end up in the same shape.
 */
export interface InstructionEffect {
  /** "3" for top-level instruction 3, "3.1" for the second instruction it invoked. */
  where: string;
  programId: string;
  /** jsonParsed type name ("transfer", "approve", ...) or `unknown` when the data is not understood. */
  op: string;
  roles: Record<string, string>;
  /** Every account the instruction names, for rules on unknown operations. */
  accounts: string[];
  amount?: bigint;
  /** Lamports moved, for System operations. */
  lamports?: bigint;
}

const u64 = (data: Uint8Array, offset: number): bigint | undefined =>
  data.length >= offset + 8 ? Buffer.from(data).readBigUInt64LE(offset) : undefined;

function named(accounts: string[], names: readonly string[]): Record<string, string> {
  const roles: Record<string, string> = {};
  names.forEach((name, i) => {
    const account = accounts[i];
    if (account !== undefined) roles[name] = account;
  });
  return roles;
}

const SYSTEM_OPS: Record<number, { op: string; roles: readonly string[]; lamportsAt?: number }> = {
  0: { op: "createAccount", roles: ["source", "newAccount"], lamportsAt: 4 },
  1: { op: "assign", roles: ["account"] },
  2: { op: "transfer", roles: ["source", "destination"], lamportsAt: 4 },
  3: { op: "createAccountWithSeed", roles: ["source", "newAccount", "base"] },
  4: { op: "advanceNonce", roles: ["nonceAccount"] },
  5: { op: "withdrawFromNonce", roles: ["nonceAccount", "destination"], lamportsAt: 4 },
  6: { op: "initializeNonce", roles: ["nonceAccount"] },
  7: { op: "authorizeNonce", roles: ["nonceAccount"] },
  8: { op: "allocate", roles: ["account"] },
  9: { op: "allocateWithSeed", roles: ["account", "base"] },
  10: { op: "assignWithSeed", roles: ["account", "base"] },
  11: { op: "transferWithSeed", roles: ["source", "sourceBase", "destination"], lamportsAt: 4 },
  12: { op: "upgradeNonce", roles: ["nonceAccount"] },
};

const TOKEN_OPS: Record<number, { op: string; roles: readonly string[]; amountAt?: number }> = {
  1: { op: "initializeAccount", roles: ["account", "mint", "owner"] },
  3: { op: "transfer", roles: ["source", "destination", "authority"], amountAt: 1 },
  4: { op: "approve", roles: ["source", "delegate", "owner"], amountAt: 1 },
  5: { op: "revoke", roles: ["source", "owner"] },
  6: { op: "setAuthority", roles: ["account", "authority"] },
  7: { op: "mintTo", roles: ["mint", "account", "mintAuthority"], amountAt: 1 },
  8: { op: "burn", roles: ["account", "mint", "authority"], amountAt: 1 },
  9: { op: "closeAccount", roles: ["account", "destination", "owner"] },
  10: { op: "freezeAccount", roles: ["account", "mint", "freezeAuthority"] },
  11: { op: "thawAccount", roles: ["account", "mint", "freezeAuthority"] },
  12: { op: "transferChecked", roles: ["source", "mint", "destination", "authority"], amountAt: 1 },
  13: { op: "approveChecked", roles: ["source", "mint", "delegate", "owner"], amountAt: 1 },
  14: { op: "mintToChecked", roles: ["mint", "account", "mintAuthority"], amountAt: 1 },
  15: { op: "burnChecked", roles: ["account", "mint", "authority"], amountAt: 1 },
  16: { op: "initializeAccount2", roles: ["account", "mint"] },
  17: { op: "syncNative", roles: ["account"] },
  18: { op: "initializeAccount3", roles: ["account", "mint"] },
  22: { op: "initializeImmutableOwner", roles: ["account"] },
};

// Associated Token Account program: no data (the original create) or one byte.
const ATA_OPS: Record<number, { op: string; roles: readonly string[] }> = {
  0: { op: "create", roles: ["source", "account", "wallet", "mint", "systemProgram", "tokenProgram"] },
  1: {
    op: "createIdempotent",
    roles: ["source", "account", "wallet", "mint", "systemProgram", "tokenProgram"],
  },
  2: {
    op: "recoverNested",
    roles: [
      "nestedSource",
      "nestedMint",
      "destination",
      "nestedOwner",
      "ownerMint",
      "wallet",
      "tokenProgram",
    ],
  },
};

/** Reads a raw instruction (program id, account keys, data bytes). */
export function rawEffect(
  where: string,
  programId: string,
  accounts: string[],
  data: Uint8Array,
): InstructionEffect {
  const base = { where, programId, accounts, roles: {} as Record<string, string>, op: "unknown" };
  if (programId === SYSTEM_PROGRAM && data.length >= 4) {
    const spec = SYSTEM_OPS[Buffer.from(data).readUInt32LE(0)];
    if (!spec) return base;
    const effect: InstructionEffect = { ...base, op: spec.op, roles: named(accounts, spec.roles) };
    const lamports = spec.lamportsAt !== undefined ? u64(data, spec.lamportsAt) : undefined;
    if (lamports !== undefined) effect.lamports = lamports;
    if (spec.op === "createAccountWithSeed") {
      // base (32) + seed (u64 length + bytes) + lamports: the offset depends on the seed's length.
      const seedLength = u64(data, 36);
      if (seedLength !== undefined && seedLength < 1024n) {
        const at = 44 + Number(seedLength);
        const value = u64(data, at);
        if (value !== undefined) effect.lamports = value;
      }
    }
    return effect;
  }
  if (isTokenProgram(programId) && data.length >= 1) {
    const spec = TOKEN_OPS[data[0] as number];
    if (!spec) return { ...base, op: `unknown-${data[0]}` };
    const effect: InstructionEffect = { ...base, op: spec.op, roles: named(accounts, spec.roles) };
    const amount = spec.amountAt !== undefined ? u64(data, spec.amountAt) : undefined;
    if (amount !== undefined) effect.amount = amount;
    if ((spec.op === "initializeAccount2" || spec.op === "initializeAccount3") && data.length >= 33) {
      effect.roles.owner = new PublicKey(data.subarray(1, 33)).toBase58();
    }
    if (spec.op === "setAuthority" && data.length >= 3 && data[2] === 1 && data.length >= 35) {
      effect.roles.newAuthority = new PublicKey(data.subarray(3, 35)).toBase58();
    }
    return effect;
  }
  if (programId === ASSOCIATED_TOKEN_PROGRAM) {
    const spec = data.length === 0 ? ATA_OPS[0] : data.length === 1 ? ATA_OPS[data[0] as number] : undefined;
    if (!spec) return base;
    return { ...base, op: spec.op, roles: named(accounts, spec.roles) };
  }
  return base;
}

/** The shapes an RPC uses for one inner instruction (web3.js turns program ids into PublicKeys). */
export type RpcInnerInstruction =
  | { programId: PublicKey | string; accounts: (PublicKey | string)[]; data: string }
  | { programId: PublicKey | string; program?: string; parsed: unknown };

const ROLE_KEYS = new Set([
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
]);

/** Reads an inner instruction as returned by simulateTransaction (raw base58 data or jsonParsed). */
export function innerEffect(where: string, ix: RpcInnerInstruction): InstructionEffect {
  const programId = ix.programId.toString();
  if ("data" in ix) {
    let data: Uint8Array;
    try {
      data = bs58.decode(ix.data);
    } catch {
      data = new Uint8Array();
    }
    return rawEffect(
      where,
      programId,
      ix.accounts.map((a) => a.toString()),
      data,
    );
  }
  const parsed = ix.parsed as { type?: unknown; info?: Record<string, unknown> } | null;
  const info =
    parsed && typeof parsed === "object" && parsed.info && typeof parsed.info === "object" ? parsed.info : {};
  const roles: Record<string, string> = {};
  for (const [key, value] of Object.entries(info)) {
    if (ROLE_KEYS.has(key) && typeof value === "string") roles[key] = value;
  }
  // Multisig authorities count as the authority for the rules.
  if (!roles.authority && roles.multisigAuthority) roles.authority = roles.multisigAuthority;
  if (!roles.owner && roles.multisigOwner) roles.owner = roles.multisigOwner;
  const effect: InstructionEffect = {
    where,
    programId,
    op: typeof parsed?.type === "string" ? parsed.type : "unknown",
    roles,
    accounts: Object.values(roles),
  };
  const amount = pickAmount(info);
  if (amount !== undefined) effect.amount = amount;
  if (typeof info.lamports === "number" || typeof info.lamports === "string") {
    effect.lamports = BigInt(info.lamports);
  }
  return effect;
}

function pickAmount(info: Record<string, unknown>): bigint | undefined {
  const direct = info.amount;
  if (typeof direct === "string" && /^\d+$/.test(direct)) return BigInt(direct);
  const ui = info.tokenAmount as { amount?: unknown } | undefined;
  if (ui && typeof ui.amount === "string" && /^\d+$/.test(ui.amount)) return BigInt(ui.amount);
  return undefined;
}
