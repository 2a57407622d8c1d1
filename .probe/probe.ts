import { Keypair, PublicKey, Transaction, TransactionInstruction } from "@solana/web3.js";
import { LiteSVM } from "litesvm";
import { getTransactionDecoder } from "@solana/kit";
import { buildSbfElf, sbf } from "../src/sandbox/chain/sbf-elf.ts";

const svm = new LiteSVM();
const programId = Keypair.generate().publicKey;
const elf = buildSbfElf([
  sbf.movImm(1, 7), sbf.movImm(2, 8), sbf.movImm(3, 9), sbf.movImm(4, 10), sbf.movImm(5, 11),
  { kind: "syscall", name: "sol_log_64_" },
  sbf.movImm(0, 0), sbf.exit(),
]);
try { svm.addProgram(programId.toBase58() as never, elf); } catch (e) { console.log("addProgram failed", e); process.exit(1); }
const payer = Keypair.generate();
svm.airdrop(payer.publicKey.toBase58() as never, 1_000_000_000n as never);
const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: String(svm.latestBlockhash()) });
tx.add(new TransactionInstruction({ programId, keys: [], data: Buffer.from([1, 2, 3]) }));
tx.sign(payer);
const decoded = getTransactionDecoder().decode(tx.serialize());
const result = svm.sendTransaction(decoded as never) as any;
if (typeof result.err === "function") console.log("FAILED", result.err(), result.meta().logs());
else console.log("OK", result.logs());
