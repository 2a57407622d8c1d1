import { z } from "zod";
import { type EndpointName, endpoints } from "../../api/endpoints.js";
import { seededRandom } from "./seeded-random.js";

const rate = z.number().min(0, "must be 0 to 1").max(1, "must be 0 to 1");

/** Faults of one endpoint. Rates are probabilities per request, drawn from the seeded generator. */
export const endpointFaultsSchema = z.strictObject({
  /** Chance of a 5xx answered before the handler runs (nothing takes effect). */
  errorRate: rate.optional(),
  /** Status of those errors; 503 unless set. */
  errorStatus: z.number().int().min(500, "must be 500 to 599").max(599, "must be 500 to 599").optional(),
  /** Delay added before the request is handled. */
  latencyMs: z.number().int().min(0, "must be >= 0").max(600_000, "must be at most 600000").optional(),
  /** Chance of a 200 whose body is not JSON at all. */
  malformedRate: rate.optional(),
  /** Chance of a 200 whose body stops halfway. */
  truncatedRate: rate.optional(),
  /** Chance of a 200 whose body is valid JSON with one field of the wrong type. */
  schemaBreakRate: rate.optional(),
});
export type EndpointFaults = z.infer<typeof endpointFaultsSchema>;

const endpointNames = Object.keys(endpoints) as [EndpointName, ...EndpointName[]];

export const faultSettingsSchema = z.strictObject({
  /** Seed of the fault generator; setting it restarts the sequence. */
  seed: z.number().int().optional(),
  /** Faults of every endpoint; an endpoint's own entry overrides them field by field. */
  all: endpointFaultsSchema.optional(),
  endpoints: z.partialRecord(z.enum(endpointNames), endpointFaultsSchema).optional(),
  /** The next N requests (any endpoint, any key) get a 429. */
  burst429: z.number().int().min(0, "must be >= 0").optional(),
  /** `Retry-After` seconds on burst 429s; none is sent when absent. */
  burstRetryAfterSeconds: z.number().int().min(1, "must be >= 1").optional(),
  /**
   * A hostile service: swap and order builds send the user's input to a stranger's token account
   * (not the pool or the order's escrow), and swap quotes carry `otherAmountThreshold: "0"`.
   */
  redirectFunds: z.boolean().optional(),
});
export type FaultSettings = z.infer<typeof faultSettingsSchema>;

export type BodyFault = "malformed" | "truncated" | "schema";

/** What happens to one request, decided before it is handled. */
export interface FaultPlan {
  readonly latencyMs: number;
  readonly failStatus: number | undefined;
  readonly bodyFault: BodyFault | undefined;
}

const NO_FAULT: FaultPlan = { latencyMs: 0, failStatus: undefined, bodyFault: undefined };

/**
 * The fault knobs of a running sandbox, settable at any time (by tests directly, or over the loopback
 * admin route). Deterministic: with the same seed and settings, the same requests meet the same faults.
 */
export class FaultController {
  private settings: FaultSettings = {};
  private random: () => number;
  private seed: number;
  private burstLeft = 0;

  constructor(settings: FaultSettings = {}, seed = 1) {
    this.seed = seed;
    this.random = seededRandom(seed);
    this.set(settings);
  }

  /** Replaces every setting (a burst included); a `seed` restarts the random sequence. */
  set(settings: FaultSettings): void {
    const parsed = faultSettingsSchema.parse(settings);
    this.settings = parsed;
    this.burstLeft = parsed.burst429 ?? 0;
    if (parsed.seed !== undefined) {
      this.seed = parsed.seed;
      this.random = seededRandom(parsed.seed);
    }
  }

  /** Sets one endpoint's faults, or every endpoint's with `"*"`, keeping the rest. */
  configure(target: EndpointName | "*", faults: EndpointFaults): void {
    const parsed = endpointFaultsSchema.parse(faults);
    if (target === "*") this.settings = { ...this.settings, all: parsed };
    else this.settings = { ...this.settings, endpoints: { ...this.settings.endpoints, [target]: parsed } };
  }

  /** The next `count` requests get a 429. */
  burst429(count: number, retryAfterSeconds?: number): void {
    this.burstLeft = count;
    this.settings = { ...this.settings, burst429: count, burstRetryAfterSeconds: retryAfterSeconds };
  }

  /** No faults from now on; the random sequence restarts from the seed. */
  clear(): void {
    this.settings = {};
    this.burstLeft = 0;
    this.random = seededRandom(this.seed);
  }

  /** Whether builds redirect users' funds to a stranger (the `redirectFunds` setting). */
  redirectFunds(): boolean {
    return this.settings.redirectFunds === true;
  }

  /** Current settings, with the burst requests still to come. */
  current(): FaultSettings & { burstLeft: number } {
    return { ...this.settings, burstLeft: this.burstLeft };
  }

  /** Consumes one burst request: `undefined` when no burst is under way, else its `Retry-After`. */
  takeBurst(): { retryAfterSeconds: number | undefined } | undefined {
    if (this.burstLeft <= 0) return undefined;
    this.burstLeft -= 1;
    return { retryAfterSeconds: this.settings.burstRetryAfterSeconds };
  }

  /** Draws this request's faults. Draws happen only for knobs that are on, in a fixed order. */
  planFor(endpoint: EndpointName): FaultPlan {
    const faults = { ...this.settings.all, ...this.settings.endpoints?.[endpoint] };
    if (Object.keys(faults).length === 0) return NO_FAULT;
    const hits = (chance: number | undefined) => chance !== undefined && chance > 0 && this.random() < chance;
    const failStatus = hits(faults.errorRate) ? (faults.errorStatus ?? 503) : undefined;
    let bodyFault: BodyFault | undefined;
    if (hits(faults.malformedRate)) bodyFault = "malformed";
    else if (hits(faults.truncatedRate)) bodyFault = "truncated";
    else if (hits(faults.schemaBreakRate)) bodyFault = "schema";
    return { latencyMs: faults.latencyMs ?? 0, failStatus, bodyFault };
  }
}
