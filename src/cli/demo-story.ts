import { Connection } from "@solana/web3.js";
import type { RunningKeeper } from "../app/start-keeper.js";
import { formatUsd } from "../core/money.js";
import { DONE_WITHOUT_TRANSACTION, type LedgerStatus } from "../keeper/state/ledger.js";
import type { RunningSandbox } from "../sandbox/index.js";
import { SERVICE_CLAIM_DELAY_SECONDS } from "../sandbox/world/world.js";

/** A position the demo opened at its start, and whose it is. */
export interface OpenedPosition {
  readonly walletIndex: number;
  readonly marketId: string;
  readonly pubkey: string;
}

/**
 * The demo's two stories about the live service's own rules, told as they happen: the Forecast
 * position sold through the service's execute endpoint (the proceeds read on the local chain), and the
 * small winner auto-claim leaves to the service's free claim, which the demo then lets come due by
 * moving the sandbox's clock a day on (when nothing else of the wallets waits for a claim, so the
 * service's claim races none of Keeper's).
 */
export class DemoStory {
  private readonly told = new Set<"forecast" | "left" | "advanced" | "paid">();
  private readonly connection: Connection | undefined;

  constructor(
    private readonly sandbox: RunningSandbox,
    private readonly keeper: RunningKeeper,
    private readonly forecast: OpenedPosition,
    private readonly small: OpenedPosition,
    /** The exit targets' positions: the clock moves only once all of them are sold. */
    private readonly exitPositions: readonly string[],
    private readonly print: (line: string) => void,
  ) {
    this.connection =
      sandbox.chain === undefined ? undefined : new Connection(sandbox.chain.url, "confirmed");
  }

  /** Tells what happened since the last step; called on the summary's timer. */
  async step(): Promise<void> {
    if (!this.told.has("forecast")) await this.forecastSold();
    if (!this.told.has("left")) await this.smallLeft();
    else if (!this.told.has("advanced")) await this.advanceWhenQuiet();
    else if (!this.told.has("paid")) await this.servicePaid();
  }

  private async forecastSold(): Promise<void> {
    const row = await this.keeper.ledger.get(`close-${this.forecast.pubkey}`);
    if (row?.status !== "confirmed" || row.signature === undefined) return;
    this.told.add("forecast");
    const route = (row.execution as { context?: { type?: string } } | null | undefined)?.context?.type;
    const delta = await this.usdcDelta(row.signature, this.forecast);
    this.print(
      `demo: sandbox wallet ${this.forecast.walletIndex}'s Forecast position on ${this.forecast.marketId} sold through the service's execute endpoint (${route ?? "no context"}, co-signed by its vault): USDC ${signed(delta)} on the local chain, transaction ${row.signature}`,
    );
  }

  private async smallLeft(): Promise<void> {
    const row = await this.keeper.ledger.get(`claim-${this.small.pubkey}-left`);
    if (row?.status !== "left_to_service") return;
    this.told.add("left");
    const contracts = this.sandbox.world.findPosition(this.small.pubkey)?.contracts;
    this.print(
      `demo: sandbox wallet ${this.small.walletIndex}'s winner on ${this.small.marketId} (${contracts} contract) not claimed early: ${row.reason ?? "left to the service"}`,
    );
  }

  /** Moves the sandbox's clock a day on once the exits are sold and no other winner waits for a claim. */
  private async advanceWhenQuiet(): Promise<void> {
    const { world } = this.sandbox;
    const sold = this.exitPositions.every((pubkey) => world.findPosition(pubkey)?.closedAt !== undefined);
    const rows = await this.keeper.ledger.list({ limit: 10_000 });
    if (!sold || rows.some((r) => !DONE.includes(r.status))) return;
    const left = new Set(rows.filter((r) => r.status === "left_to_service").map((r) => r.key));
    const waiting = world
      .allPositions()
      .filter((p) => p.ownerIndex < this.sandbox.wallets.length && world.isClaimable(p))
      .filter((p) => !left.has(`claim-${world.positionPubkey(p)}-left`));
    if (waiting.length > 0) return;
    this.told.add("advanced");
    this.sandbox.clock.advance(SERVICE_CLAIM_DELAY_SECONDS + 1);
    this.print(
      "demo: sandbox clock moved a day on: the service's own free claim of what was left to it is due",
    );
  }

  private async servicePaid(): Promise<void> {
    const position = this.sandbox.world.findPosition(this.small.pubkey);
    const signature = position?.claimSignature;
    if (position?.claimedAt === undefined || signature === undefined) return;
    this.told.add("paid");
    const delta = await this.usdcDelta(signature, this.small);
    this.print(
      `demo: the service claimed sandbox wallet ${this.small.walletIndex}'s winner on ${this.small.marketId} itself, free: USDC ${signed(delta)} on the local chain, transaction ${signature}`,
    );
  }

  /** What a landed transaction moved into the wallet's USDC, read from the chain's record of it. */
  private async usdcDelta(signature: string, of: OpenedPosition): Promise<bigint | undefined> {
    if (this.connection === undefined) return undefined;
    const tx = await this.connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    const owner = this.sandbox.wallets[of.walletIndex];
    const sum = (balances: readonly TokenBalance[] | null | undefined) =>
      (balances ?? [])
        .filter((b) => b.owner === owner && b.mint === this.sandbox.usdcMint)
        .reduce((total, b) => total + BigInt(b.uiTokenAmount.amount), 0n);
    if (tx?.meta == null) return undefined;
    return sum(tx.meta.postTokenBalances) - sum(tx.meta.preTokenBalances);
  }
}

interface TokenBalance {
  readonly owner?: string;
  readonly mint: string;
  readonly uiTokenAmount: { readonly amount: string };
}

const DONE: readonly LedgerStatus[] = [
  "confirmed",
  "failed",
  "refused",
  "dry-run",
  ...DONE_WITHOUT_TRANSACTION,
];

function signed(micro: bigint | undefined): string {
  if (micro === undefined) return "(not read)";
  return micro < 0n ? `-$${formatUsd(-micro)}` : `+$${formatUsd(micro)}`;
}
