import { PublicKey } from "@solana/web3.js";
import type { WorldChainPort } from "./chain-port.js";
import { positionFigures } from "./views.js";
import type { World } from "./world.js";

/** How often the service's keepers look for claims that fell due (real time; the due time is the world's). */
export const SERVICE_CLAIMS_INTERVAL_MS = 250;

export interface ServiceClaimsLogger {
  warn(obj: object, msg: string): void;
}

/**
 * The service's own keepers: every winner still unclaimed a day after its market settled (on the
 * world's clock) is claimed for its owner, free, in a transaction the service pays for, signs and
 * sends. The payout lands on the chain like any claim's; the world records it when it lands.
 */
export class ServiceClaims {
  /** Positions whose claim was sent and has not landed yet: sent once, never twice at a time. */
  private readonly sending = new Set<number>();

  constructor(
    private readonly world: World,
    private readonly chain: WorldChainPort,
    private readonly logger?: ServiceClaimsLogger,
  ) {}

  /** Claims every winner now due; resolves when their transactions were answered. Returns how many landed. */
  async sweep(): Promise<number> {
    const due = this.world.serviceClaimsDue().filter((p) => !this.sending.has(p.index));
    let landed = 0;
    for (const position of due) {
      this.sending.add(position.index);
      try {
        const outcome = await this.chain.serviceClaim({
          owner: new PublicKey(this.world.ownerOf(position)),
          positionPubkey: new PublicKey(this.world.positionPubkey(position)),
          payoutRaw: BigInt(positionFigures(this.world, position).payoutMicro),
        });
        if (outcome.err === null) landed += 1;
        else
          this.logger?.warn({ position: position.index, err: outcome.err }, "service claim failed on chain");
      } catch (error) {
        this.logger?.warn({ position: position.index, err: error }, "service claim failed");
      } finally {
        this.sending.delete(position.index);
      }
    }
    return landed;
  }

  /** Sweeps on a timer until the returned function is called. */
  start(intervalMs = SERVICE_CLAIMS_INTERVAL_MS): () => void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      void this.sweep().finally(() => {
        running = false;
      });
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
