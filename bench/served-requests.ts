import type { ServedRequest } from "../src/sandbox/server.js";
import { REQUEST_KIND, type RequestEvent, type RequestKind } from "./protocol.js";

/**
 * The keeper's requests as the sandbox answered them, counted in the benchmark's process: the keeper's
 * own process runs Keeper alone, so its CPU a claim is Keeper's and no instrument's. Recording is on
 * only while a keeper phase runs (the naive bot counts its own). Times are arrivals at the service.
 */
export class ServedRequests {
  #walletIndex = new Map<string, number>();
  #events: RequestEvent[] | undefined;

  /** The sandbox's onServed. */
  readonly onServed = (served: ServedRequest): void => {
    this.#events?.push(this.#eventOf(served));
  };

  /** The sandbox's wallets in index order, once it is up. */
  walletsAre(wallets: readonly string[]): void {
    this.#walletIndex = new Map(wallets.map((wallet, index) => [wallet, index]));
  }

  start(): void {
    this.#events = [];
  }

  /** What was recorded since the last take. */
  take(): RequestEvent[] {
    const events = this.#events ?? [];
    if (this.#events) this.#events = [];
    return events;
  }

  /** The rest, and recording off. */
  stop(): RequestEvent[] {
    const events = this.take();
    this.#events = undefined;
    return events;
  }

  #eventOf(served: ServedRequest): RequestEvent {
    const url = new URL(served.url, "http://sandbox");
    let kind: RequestKind = REQUEST_KIND.other;
    let owner = url.searchParams.get("ownerPubkey") ?? undefined;
    if (url.pathname === "/prediction/v1/positions") kind = REQUEST_KIND.positions;
    else if (url.pathname.endsWith("/claim")) {
      kind = REQUEST_KIND.claim;
      // A claim refused before its body was read (a 429) names no owner.
      const body = served.body as { ownerPubkey?: unknown } | undefined;
      owner = typeof body?.ownerPubkey === "string" ? body.ownerPubkey : undefined;
    }
    const wallet = owner === undefined ? -1 : (this.#walletIndex.get(owner) ?? -1);
    return [served.receivedAtMs, kind, wallet, served.status];
  }
}
