import type { Invite } from "../../core/schemas/send.js";
import { derivePubkey, deriveSignature, hashString, intBetween, mulberry32 } from "./rng.js";

export const INVITES_PER_PAGE = 10;
const DAY = 86_400;
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * The invite history of any address, a function of (seed, address): sandbox wallets get enough for
 * three pages; other addresses get between none and two pages. Newest first.
 */
export function invitesOf(
  seed: number,
  address: string,
  genesis: number,
  options: { readonly isSandboxWallet: boolean; readonly mints: readonly string[] },
): Invite[] {
  const random = mulberry32(hashString(`invites:${address}#${seed}`));
  const count = options.isSandboxWallet ? 23 : intBetween(random, 0, 19);
  const invites: Invite[] = [];
  for (let i = 0; i < count; i++) {
    const creation = genesis - (i + 1) * intBetween(random, 1, 3) * DAY - intBetween(random, 0, DAY);
    const expiry = creation + 30 * DAY;
    // Cycle the three outcomes so every page shows each of them.
    const outcome = (["claimed", "clawed_back", "pending"] as const)[i % 3] ?? "pending";
    const label = `invite:${address}:${i}`;
    const deletion = outcome === "pending" ? null : creation + intBetween(random, 1, 20) * DAY;
    // A pending invite's mint is not known yet on the live service: null.
    const mint = outcome === "pending" ? null : (options.mints[i % options.mints.length] ?? null);
    invites.push({
      invite_signer: derivePubkey(`${label}:signer`, seed).toBase58(),
      invite_pda: derivePubkey(`${label}:pda`, seed).toBase58(),
      sender: address,
      creation_tx: deriveSignature(`${label}:create`, seed),
      deletion_tx: deletion === null ? null : deriveSignature(`${label}:delete`, seed),
      receiver: outcome === "claimed" ? derivePubkey(`${label}:receiver`, seed).toBase58() : null,
      mint,
      expiry: iso(expiry),
      creation_time: iso(creation),
      deletion_time: deletion === null ? null : iso(deletion),
      amount: String(intBetween(random, 1, 500) * 1_000_000),
      // As the live service: a pending invite has a null action and `confirmed` comes as 0/1.
      action: outcome === "pending" ? null : outcome,
      confirmed: outcome === "pending" ? 0 : 1,
    });
  }
  return invites;
}
