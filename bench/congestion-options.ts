import { parseArgs } from "node:util";

/** How the keeper prices the builds it may price, in one phase of the run. */
export type FeeMode = "escalate" | "percentile" | "fixed";
export const FEE_MODES: readonly FeeMode[] = ["escalate", "percentile", "fixed"];

export interface CongestionBenchOptions {
  /** Sandbox wallets; closes and swaps are spread over them. */
  readonly wallets: number;
  /** Close intents per phase (at most the wallets' closable positions). */
  readonly closes: number;
  /** Swap intents per phase (USDC to SOL, 1 USDC each). */
  readonly swaps: number;
  /** The intents are admitted evenly over this many seconds, so they meet the whole walk. */
  readonly spreadSeconds: number;
  readonly slotMs: number;
  /** Each transaction's first n sends are lost (the chain's dropFirstSends). */
  readonly dropFirst: number;
  /** The threshold's walk: start, growth per slot, volatility per slot (see congestionWalk). */
  readonly startFee: number;
  readonly growthPerSlot: number;
  readonly volatility: number;
  /** The fixed mode's price: minPriorityFeeMicroLamports = maxComputeUnitPriceMicroLamports. */
  readonly fixedFee: number;
  readonly modes: readonly FeeMode[];
  readonly seed: number;
  readonly redisUrl: string;
  readonly logLevel: string;
}

const USAGE = `usage: npm run bench:congestion -- [options]

  --wallets N         sandbox wallets (default 40)
  --closes N          close intents per phase (default 40; at most the closable positions)
  --swaps N           swap intents per phase, 1 USDC to SOL each (default 40)
  --spread S          seconds over which the intents are admitted, evenly (default 40)
  --slot-ms MS        slot time (default 100: a blockhash lives 15 s)
  --drop-first N      each transaction's first N sends are lost (default 1)
  --start-fee U       the congestion threshold at the first slot, micro-lamports per unit (default 500)
  --growth G          the threshold's growth per slot (default 1.006: about x11 over 40 s of 100 ms slots)
  --volatility V      the standard deviation of the log of each slot's shock (default 0.01)
  --fixed-fee U       the fixed mode's price (default 1000, Keeper's default minimum)
  --modes LIST        phases, in order: escalate, percentile, fixed (default escalate,fixed)
  --seed N            world and walk seed (default 1)
  --redis URL         Redis (default redis://127.0.0.1:6379; a unique prefix is used and removed)
  --log-level L       keeper log level, written to a file (default warn)`;

function positive(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a number above 0, got ${value}`);
  return n;
}

function count(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`--${name}: expected a whole number of at least 0, got ${value}`);
  return Number(value);
}

function atLeastZero(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`--${name}: expected a number of at least 0, got ${value}`);
  return n;
}

export function parseCongestionOptions(argv: readonly string[]): CongestionBenchOptions | { help: string } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      wallets: { type: "string" },
      closes: { type: "string" },
      swaps: { type: "string" },
      spread: { type: "string" },
      "slot-ms": { type: "string" },
      "drop-first": { type: "string" },
      "start-fee": { type: "string" },
      growth: { type: "string" },
      volatility: { type: "string" },
      "fixed-fee": { type: "string" },
      modes: { type: "string" },
      seed: { type: "string" },
      redis: { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return { help: USAGE };
  const modes = (values.modes ?? "escalate,fixed").split(",").map((m) => m.trim());
  for (const mode of modes)
    if (!(FEE_MODES as readonly string[]).includes(mode))
      throw new Error(`--modes: expected a list of ${FEE_MODES.join(", ")}, got ${mode}`);
  return {
    wallets: Math.round(positive(values.wallets, "wallets", 40)),
    closes: count(values.closes, "closes", 40),
    swaps: count(values.swaps, "swaps", 40),
    spreadSeconds: positive(values.spread, "spread", 40),
    slotMs: Math.round(positive(values["slot-ms"], "slot-ms", 100)),
    dropFirst: count(values["drop-first"], "drop-first", 1),
    startFee: positive(values["start-fee"], "start-fee", 500),
    growthPerSlot: positive(values.growth, "growth", 1.006),
    volatility: atLeastZero(values.volatility, "volatility", 0.01),
    fixedFee: count(values["fixed-fee"], "fixed-fee", 1_000),
    modes: modes as FeeMode[],
    seed: Math.round(positive(values.seed, "seed", 1)),
    redisUrl: values.redis ?? "redis://127.0.0.1:6379",
    logLevel: values["log-level"] ?? "warn",
  };
}
