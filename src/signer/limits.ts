import { PolicyRefusal } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import { type DayTally, sum, utcDay } from "./day-tally.js";

/** The intents that spend a token of the wallet: a swap, a trigger order's deposit, a recurring plan's. */
export const SPENDING_KINDS = ["swap", "createTrigger", "createRecurring"] as const;
export type SpendingKind = (typeof SPENDING_KINDS)[number];

/** What one intent spends: `amount` raw units of `inputMint`, for `outputMint`. */
export interface Spend {
  kind: SpendingKind;
  inputMint: string;
  outputMint: string;
  amount: bigint;
}

export interface AllowedMints {
  input: ReadonlySet<string>;
  output: ReadonlySet<string>;
}

/** The signer's own limits, from its config file (never from Redis). */
export interface SignerLimitSettings {
  allowedMints: Readonly<Record<SpendingKind, AllowedMints>>;
  /** Raw units of an input mint one intent may spend at most. */
  perIntent: ReadonlyMap<string, bigint>;
  /** Raw units of an input mint the signer may sign for in one UTC day. */
  perDay: ReadonlyMap<string, bigint>;
}

export function spendOf(intent: Intent): Spend | undefined {
  switch (intent.kind) {
    case "swap":
      return {
        kind: intent.kind,
        inputMint: intent.inputMint,
        outputMint: intent.outputMint,
        amount: BigInt(intent.amount),
      };
    case "createTrigger":
      return {
        kind: intent.kind,
        inputMint: intent.inputMint,
        outputMint: intent.outputMint,
        amount: BigInt(intent.makingAmount),
      };
    case "createRecurring":
      return {
        kind: intent.kind,
        inputMint: intent.inputMint,
        outputMint: intent.outputMint,
        amount: BigInt(intent.inAmount),
      };
    default:
      return undefined;
  }
}

/**
 * Refuses a spend the signer's config does not allow: a mint not allowed for its kind
 * (`mint_not_allowed`), more than the per-intent cap of its input mint (`cap_per_intent`), or more than
 * is left of the input mint's daily cap after `spentToday` (`cap_per_day`).
 */
export function checkSpend(spend: Spend, settings: SignerLimitSettings, spentToday: bigint): void {
  const allowed = settings.allowedMints[spend.kind];
  for (const [side, mint] of [
    ["input", spend.inputMint],
    ["output", spend.outputMint],
  ] as const)
    if (!allowed[side].has(mint))
      throw new PolicyRefusal(
        "mint_not_allowed",
        `a ${spend.kind} with ${side} mint ${mint}: the signer allows ${describeSet(allowed[side])} as ${side} of a ${spend.kind} (signer.limits.allowedMints.${spend.kind}.${side}, or the mints the config's strategies name)`,
      );
  const perIntent = settings.perIntent.get(spend.inputMint);
  if (perIntent !== undefined && spend.amount > perIntent)
    throw new PolicyRefusal(
      "cap_per_intent",
      `a ${spend.kind} of ${spend.amount} of mint ${spend.inputMint}: signer.limits.perIntent allows at most ${perIntent}`,
    );
  const perDay = settings.perDay.get(spend.inputMint);
  if (perDay !== undefined && spentToday + spend.amount > perDay)
    throw new PolicyRefusal(
      "cap_per_day",
      `a ${spend.kind} of ${spend.amount} of mint ${spend.inputMint}: ${spentToday} signed today (UTC), signer.limits.perDay allows ${perDay}`,
    );
}

function describeSet(mints: ReadonlySet<string>): string {
  return mints.size === 0 ? "no mint" : [...mints].sort().join(", ");
}

/**
 * The limits checked before the policy for every intent the signer is asked to sign, and the day's
 * tally counted once a spend passed the policy, just before it is signed.
 */
export class SignerLimits {
  constructor(
    private readonly settings: SignerLimitSettings,
    private readonly tally: DayTally,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Refuses (PolicyRefusal) an intent beyond the limits; other kinds pass. */
  async check(intent: Intent): Promise<void> {
    const spend = spendOf(intent);
    if (!spend) return;
    checkSpend(spend, this.settings, await this.spentBefore(intent.key, spend));
  }

  /**
   * Counts a spend with a daily cap against today's tally; refuses it if, counted, the day is over
   * the cap (another signer counted meanwhile), taking its entry back.
   */
  async count(intent: Intent): Promise<void> {
    const spend = spendOf(intent);
    if (!spend || !this.settings.perDay.has(spend.inputMint)) return;
    const day = utcDay(this.nowMs());
    const counted = await this.tally.entries(day, spend.inputMint);
    if (counted.has(intent.key)) return;
    const total = await this.tally.add(day, spend.inputMint, intent.key, spend.amount);
    try {
      checkSpend(spend, this.settings, total - spend.amount);
    } catch (error) {
      await this.tally.remove(day, spend.inputMint, intent.key);
      throw error;
    }
  }

  /** Today's total of the input mint without this intent (a rebuilt intent is not counted twice). */
  private async spentBefore(intentKey: string, spend: Spend): Promise<bigint> {
    if (!this.settings.perDay.has(spend.inputMint)) return 0n;
    const entries = await this.tally.entries(utcDay(this.nowMs()), spend.inputMint);
    entries.delete(intentKey);
    return sum(entries);
  }
}
