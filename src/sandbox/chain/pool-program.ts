import { createHash } from "node:crypto";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { PublicKey, TransactionInstruction } from "@solana/web3.js";
import { buildSbfElf, type Instruction, sbf } from "./sbf-elf.js";

/**
 * The sandbox pool's program, so a swap's output is paid in the taker's own transaction as on a live
 * swap: the pool is a PDA of this program, and only this program can sign for it. It does one thing:
 * a TransferChecked of the Token program (or Token-2022) out of an account the pool's PDA owns, signed
 * with the PDA's seeds (`invoke_signed`). It checks nothing else: it pays what its instruction says, so
 * the sandbox trusts its clients not to ask for more (the sandbox tests clients against the service,
 * not the service against clients).
 *
 * Accounts: [source (w), mint, destination (w), pool authority (the PDA), token program].
 * Data: the TransferChecked data to pass on (tag 12, u64 amount, u8 decimals), then the PDA's seeds:
 * `POOL_SEED` (4 bytes) and its bump (1 byte).
 */
export const POOL_SEED = "pool";

/**
 * Where the program lives on every sandbox chain, whatever the seed, so a keeper config naming it in
 * `signer.allowedPrograms` works against any sandbox.
 */
export const SANDBOX_POOL_PROGRAM_ID = new PublicKey(
  createHash("sha256").update("keeper-sandbox:pool-program").digest(),
);

const R1 = 1;
const R2 = 2;
const R3 = 3;
const R4 = 4;
const R5 = 5;
const R7 = 7;
const R8 = 8;
const R10 = 10;
const ACCOUNTS = 5;
/** Each serialized account leaves room to grow (MAX_PERMITTED_DATA_INCREASE). */
const REALLOC_PADDING = 10_240;
/** Offsets in a serialized account: flags, key, owner, lamports, data length, data. */
const AT = {
  isSigner: 1,
  isWritable: 2,
  executable: 3,
  key: 8,
  owner: 40,
  lamports: 72,
  dataLen: 80,
  data: 88,
};
/** Stack layout below r10: the accounts' addresses, then the C structs the syscall reads. */
const STACK = { accounts: -40, metas: -104, infos: -328, instruction: -368, seeds: -400, signers: -416 };
const INFO_SIZE = 56;
const META_SIZE = 16;
const TRANSFER_DATA_LEN = 10;

/** Walks the serialized input: the address of each account on the stack, r8 at the instruction data. */
function readAccounts(): Instruction[] {
  const code: Instruction[] = [sbf.movReg(R7, R1), sbf.addImm(R7, 8)];
  for (let i = 0; i < ACCOUNTS; i += 1) {
    code.push(
      sbf.loadU8(R2, R7, 0),
      // A duplicate account (its index instead of 0xff) is not what the sandbox builds: refuse.
      // The offset is set once the failure exit's place is known (patchJumps).
      sbf.jneImm(R2, 0xff, 0),
      sbf.storeU64(R10, STACK.accounts + 8 * (ACCOUNTS - 1 - i), R7),
      sbf.loadU64(R2, R7, AT.dataLen),
      sbf.addReg(R7, R2),
      sbf.addImm(R7, AT.data + REALLOC_PADDING + 7),
      sbf.andImm(R7, -8),
      sbf.addImm(R7, 8), // rent epoch
    );
  }
  return code;
}

const accountAddress = (dst: number, index: number) =>
  sbf.loadU64(dst, R10, STACK.accounts + 8 * (ACCOUNTS - 1 - index));

function accountMetas(): Instruction[] {
  const flags: [number, number][] = [
    [1, 0], // source: writable
    [0, 0], // mint
    [1, 0], // destination: writable
    [0, 1], // the pool's PDA: signer, by its seeds
  ];
  return flags.flatMap(([writable, signer], i) => {
    const at = STACK.metas + META_SIZE * i;
    return [
      accountAddress(R2, i),
      sbf.addImm(R2, AT.key),
      sbf.storeU64(R10, at, R2),
      sbf.storeImmU8(R10, at + 8, writable),
      sbf.storeImmU8(R10, at + 9, signer),
    ];
  });
}

function accountInfos(): Instruction[] {
  const pointer = (at: number, field: number) => [
    sbf.movReg(R3, R2),
    sbf.addImm(R3, field),
    sbf.storeU64(R10, at, R3),
  ];
  const byte = (at: number, field: number) => [sbf.loadU8(R3, R2, field), sbf.storeU8(R10, at, R3)];
  return [0, 1, 2, 3].flatMap((i) => {
    const at = STACK.infos + INFO_SIZE * i;
    return [
      accountAddress(R2, i),
      ...pointer(at, AT.key),
      ...pointer(at + 8, AT.lamports),
      sbf.loadU64(R3, R2, AT.dataLen),
      sbf.storeU64(R10, at + 16, R3),
      ...pointer(at + 24, AT.data),
      ...pointer(at + 32, AT.owner),
      sbf.storeImmU64(R10, at + 40, 0),
      ...byte(at + 48, AT.isSigner),
      ...byte(at + 49, AT.isWritable),
      ...byte(at + 50, AT.executable),
    ];
  });
}

function invoke(): Instruction[] {
  const stackAddress = (dst: number, offset: number) => [sbf.movReg(dst, R10), sbf.addImm(dst, offset)];
  return [
    // SolInstruction: the token program's id, the metas, the TransferChecked data.
    accountAddress(R2, 4),
    sbf.addImm(R2, AT.key),
    sbf.storeU64(R10, STACK.instruction, R2),
    ...stackAddress(R2, STACK.metas),
    sbf.storeU64(R10, STACK.instruction + 8, R2),
    sbf.storeImmU64(R10, STACK.instruction + 16, 4),
    sbf.storeU64(R10, STACK.instruction + 24, R8),
    sbf.storeImmU64(R10, STACK.instruction + 32, TRANSFER_DATA_LEN),
    // The PDA's seeds: "pool" and the bump, both from the instruction data.
    sbf.movReg(R2, R8),
    sbf.addImm(R2, TRANSFER_DATA_LEN),
    sbf.storeU64(R10, STACK.seeds, R2),
    sbf.storeImmU64(R10, STACK.seeds + 8, POOL_SEED.length),
    sbf.addImm(R2, POOL_SEED.length),
    sbf.storeU64(R10, STACK.seeds + 16, R2),
    sbf.storeImmU64(R10, STACK.seeds + 24, 1),
    ...stackAddress(R2, STACK.seeds),
    sbf.storeU64(R10, STACK.signers, R2),
    sbf.storeImmU64(R10, STACK.signers + 8, 2),
    ...stackAddress(R1, STACK.instruction),
    ...stackAddress(R2, STACK.infos),
    sbf.movImm(R3, 4),
    ...stackAddress(R4, STACK.signers),
    sbf.movImm(R5, 1),
    { kind: "syscall", name: "sol_invoke_signed_c" },
    sbf.exit(), // r0: the syscall's result
  ];
}

/** The program's shared object, built once. */
let elf: Buffer | undefined;
export function poolProgramElf(): Buffer {
  if (elf !== undefined) return elf;
  const walk = readAccounts();
  const body = [...walk, sbf.movReg(R8, R7), sbf.addImm(R8, 8)];
  body.push(...accountMetas(), ...accountInfos(), ...invoke());
  // The failure exit every duplicate-account check jumps to: a custom error 1.
  const failAt = body.length;
  body.push(sbf.movImm(0, 1), sbf.exit());
  elf = buildSbfElf(patchJumps(body, failAt));
  return elf;
}

/** Points every `jne` of the account walk at the failure exit (offsets count from the next instruction). */
function patchJumps(code: Instruction[], target: number): Instruction[] {
  return code.map((ins, at) => {
    if (!Buffer.isBuffer(ins) || ins[0] !== 0x55) return ins;
    const patched = Buffer.from(ins);
    patched.writeInt16LE(target - at - 1, 2);
    return patched;
  });
}

/** The pool's payout: `amountRaw` of `mint` from the pool's `source` account to `destination`. */
export function poolPayoutInstruction(args: {
  programId: PublicKey;
  pool: PublicKey;
  bump: number;
  source: PublicKey;
  mint: PublicKey;
  destination: PublicKey;
  amountRaw: bigint;
  decimals: number;
  tokenProgram?: PublicKey;
}): TransactionInstruction {
  const data = Buffer.alloc(TRANSFER_DATA_LEN + POOL_SEED.length + 1);
  data.writeUInt8(12, 0); // TransferChecked
  data.writeBigUInt64LE(args.amountRaw, 1);
  data.writeUInt8(args.decimals, 9);
  data.write(POOL_SEED, TRANSFER_DATA_LEN, "utf8");
  data.writeUInt8(args.bump, TRANSFER_DATA_LEN + POOL_SEED.length);
  return new TransactionInstruction({
    programId: args.programId,
    keys: [
      { pubkey: args.source, isSigner: false, isWritable: true },
      { pubkey: args.mint, isSigner: false, isWritable: false },
      { pubkey: args.destination, isSigner: false, isWritable: true },
      { pubkey: args.pool, isSigner: false, isWritable: false },
      { pubkey: args.tokenProgram ?? TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
    ],
    data,
  });
}
