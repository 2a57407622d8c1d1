import { PublicKey } from "@solana/web3.js";
import { derivePubkey } from "./rng.js";

/**
 * The program the sandbox's order accounts are derived from. No such program runs on the local chain:
 * it only makes each order's address a program-derived one (off the ed25519 curve), as the live
 * service's order accounts are, so no private key can sign for an order or its escrow.
 */
export const SANDBOX_ORDER_PROGRAM_ID = derivePubkey("keeper-sandbox:order-program", 0);

/** An order's account: the PDA of (`kind`, the build's request id) under the sandbox order program. */
export function orderAddress(kind: "trigger" | "recurring", requestId: string): string {
  const [address] = PublicKey.findProgramAddressSync(
    [Buffer.from(kind, "utf8"), Buffer.from(requestId, "utf8")],
    SANDBOX_ORDER_PROGRAM_ID,
  );
  return address.toBase58();
}
