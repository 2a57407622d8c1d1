import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from "@solana/web3.js";
import { LocalChain, type LocalChainOptions } from "../../../src/sandbox/chain/local-chain.js";
import { startRpcServer } from "../../../src/sandbox/chain/rpc-server.js";

export interface Harness {
  chain: LocalChain;
  url: string;
  connection: Connection;
  close(): Promise<void>;
}

/** A local chain with its RPC server on a random loopback port; slots are short so tests run fast. */
export async function startHarness(options: LocalChainOptions = {}): Promise<Harness> {
  const chain = new LocalChain({ slotMs: 25, seed: 7, ...options });
  const server = await startRpcServer(chain, { port: 0 });
  // No websocket server: web3.js would retry one forever, so tests confirm by polling statuses.
  const connection = new Connection(server.url, { commitment: "confirmed", disableRetryOnRateLimit: true });
  return {
    chain,
    url: server.url,
    connection,
    async close() {
      chain.stop();
      await server.close();
    },
  };
}

/** Polls until `read` returns something other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  read: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function fundedKeypair(chain: LocalChain, sol = 10): Keypair {
  const keypair = Keypair.generate();
  chain.airdrop(keypair.publicKey, BigInt(sol * LAMPORTS_PER_SOL));
  return keypair;
}

export async function signedTransfer(
  connection: Connection,
  from: Keypair,
  to: Keypair["publicKey"],
  lamports: number,
): Promise<Transaction> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: from.publicKey, blockhash, lastValidBlockHeight });
  tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }));
  tx.sign(from);
  return tx;
}

export async function statusOf(connection: Connection, signature: string) {
  const { value } = await connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
  return value[0] ?? undefined;
}
