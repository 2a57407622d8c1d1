import { type Connection, PublicKey } from "@solana/web3.js";
import { rpcCall } from "../../chain/rpc.js";

/**
 * The owner's raw balance of each mint, summed over its token accounts of that mint (0 when it has
 * none), read from the RPC node: what the sweep strategy compares with what it should keep.
 */
export async function readTokenBalances(
  connection: Connection,
  owner: string,
  mints: readonly string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const mint of mints) {
    const accounts = await rpcCall("getTokenAccountsByOwner", () =>
      connection.getTokenAccountsByOwner(new PublicKey(owner), { mint: new PublicKey(mint) }),
    );
    let total = 0n;
    for (const { pubkey } of accounts.value) {
      const balance = await rpcCall("getTokenAccountBalance", () =>
        connection.getTokenAccountBalance(pubkey),
      );
      total += BigInt(balance.value.amount);
    }
    out[mint] = total.toString();
  }
  return out;
}
