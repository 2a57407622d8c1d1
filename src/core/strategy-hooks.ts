import { z } from "zod";
import type { EventDetails } from "./event-details.js";
import type { Intent } from "./intent.js";
import type { Market } from "./schemas/prediction.js";
import type { Snapshot } from "./snapshot.js";

/**
 * The optional hooks of the strategy contract: what the engine does *for* a strategy (what it reads
 * into the snapshot, which config fields it resolves to mints, which mints the signer lets it spend,
 * which prices the market watcher watches, what the status page shows) is asked of the strategy
 * through these, never decided by its name. Each has a default (the hook left out): nothing extra.
 * All are pure, like `evaluate`; the engine catches what they throw and checks what they return.
 */

type Position = Snapshot["positions"][number];

/** The service's order lists a snapshot may carry: `trigger` (limit) and `recurring` (time) orders. */
export const ORDER_LIST_KINDS = ["trigger", "recurring"] as const;
export type OrderListKind = (typeof ORDER_LIST_KINDS)[number];

/**
 * Data a strategy's config needs in the snapshot beyond the wallet's positions and pending orders.
 * Asked once at start-up, of the config with its tokens already resolved to mints. What no configured
 * strategy needs is never fetched.
 */
export interface SnapshotNeeds {
  /** `snapshot.events`: category, subcategory and tags of each event the wallet holds a position in. */
  readonly events?: boolean;
  /** ...and each event's provider too, which may cost a search per provider for a new event. */
  readonly eventProviders?: boolean;
  /** `snapshot.listedTriggerOrders` / `snapshot.listedRecurringOrders`: the service's lists of the wallet's orders. */
  readonly orderLists?: readonly OrderListKind[];
  /** `snapshot.balances`: the wallet's raw balance of each of these mints. */
  readonly balances?: readonly string[];
  /** `snapshot.claimCostMicroUsd`: an estimate of what a claim transaction costs now. */
  readonly claimCost?: boolean;
}

/** What the engine accepts from a `needs` hook: a misspelt key is refused rather than ignored. */
export const snapshotNeedsSchema = z.strictObject({
  events: z.boolean().optional(),
  eventProviders: z.boolean().optional(),
  orderLists: z.array(z.enum(ORDER_LIST_KINDS)).optional(),
  balances: z.array(z.string().min(1, "expected a mint")).optional(),
  claimCost: z.boolean().optional(),
});

/** A place in a strategy's config: keys and list indexes, e.g. `["plans", 0, "inputMint"]`. */
export type ConfigPath = readonly (string | number)[];

/** A config field that names a token (a mint, a symbol or a name), resolved by the engine to a mint. */
export interface TokenField {
  readonly path: ConfigPath;
  /** A field that states the token's decimals: refused unless it equals the token's own. */
  readonly decimalsPath?: ConfigPath;
}

/** What token search said of a resolved token, for checks that need more than its mint. */
export interface TokenFacts {
  readonly mint: string;
  readonly symbol: string;
  readonly decimals: number;
  /** Dollars per whole token; absent or null when the service gave no price. */
  readonly usdPrice?: number | null;
}

/** A mistake in a strategy's config, by its path inside the strategy's own entry. */
export interface ConfigProblem {
  readonly path: ConfigPath;
  readonly message: string;
}

/** The intent kinds that spend a token, and so have allowed mints in the signer. */
export const SPENDING_INTENT_KINDS = ["swap", "createTrigger", "createRecurring"] as const;
export type SpendingIntentKind = (typeof SPENDING_INTENT_KINDS)[number];

/** One pair of mints a strategy's intents of one kind spend (input) and receive (output). */
export interface Spending {
  readonly kind: SpendingIntentKind;
  readonly input: string;
  readonly output: string;
}

/**
 * Mark prices (micro-USD per contract of the held side) at which a strategy would act on a position,
 * for the market watcher, which polls the wallet when a market's price comes near one between sweeps:
 * `above`: at or above this; `below`: at or below this; `trailingStopPct`: a fall of this percent
 * from the highest mark the watcher saw.
 */
export interface PriceThresholds {
  readonly above?: string;
  readonly below?: string;
  readonly trailingStopPct?: number;
}

const microUsd = z.string().regex(/^\d{1,18}$/, "expected micro-USD as an integer string");
/** What the engine accepts from a `priceThresholds` hook. */
export const priceThresholdsSchema = z.strictObject({
  above: microUsd.optional(),
  below: microUsd.optional(),
  trailingStopPct: z.number().gt(0).max(100).optional(),
  /**
   * Unix seconds from which the strategy acts on the position whatever its price (a time rule, such
   * as selling some time before its market closes): the watcher polls its owner then, not at the
   * owner's next sweep.
   */
  atSeconds: z.number().int().positive().optional(),
});

/** One cell the status page shows. Text is escaped by the page; no HTML comes from a strategy. */
export interface StatusCell {
  readonly text?: string;
  /** Unix seconds, shown as a UTC time. */
  readonly at?: number;
  /** An account, order or key: shown monospaced and shortened. */
  readonly isId?: boolean;
  /** Worth a look (e.g. a rule that has entered): highlighted. */
  readonly isAlert?: boolean;
}

/**
 * A strategy's figures for one position, which the page puts in its own columns and totals (so a
 * trader reads every position the same way, whichever strategy watches it).
 */
export interface PositionOutlook {
  /**
   * What selling the position now would bring in, after the sell's estimated fee (micro-USD, an
   * integer string): the figure the strategy's own rules read. Absent: no one bids.
   */
  readonly realizableMicroUsd?: string;
  /** The rule nearest to firing, in one unit and a few words, e.g. "take-profit in +4.2 %". */
  readonly nearestRule?: string;
  /** The same rule's figures in full, shown on hover. */
  readonly nearestDetail?: string;
  /** Worth a look: the rule has entered, or a close it asked for is held back. */
  readonly isAlert?: boolean;
}

/** What Keeper will do next for a wallet, as a strategy sees it (e.g. a DCA round due, an exit's sale). */
export interface NextStep {
  readonly text: string;
  /** Unix seconds it is due at, when it is due at a time; the page sorts by it. */
  readonly at?: number;
}

/** How a strategy shows on the status page, for one wallet. */
export interface StatusView {
  /** By position pubkey: realizable value and the nearest rule, shown in the page's own columns. */
  readonly positions?: Readonly<Record<string, PositionOutlook>>;
  /** What the strategy will do next for the wallet, each in a line. */
  readonly next?: ReadonlyArray<NextStep>;
  /** Columns added to the wallet's positions table; a position without a cell shows an empty one. */
  readonly positionColumns?: ReadonlyArray<{
    /** A short lowercase name, the cells' CSS class (e.g. `exit`). */
    readonly key: string;
    readonly label: string;
    /** By position pubkey. */
    readonly cells: Readonly<Record<string, StatusCell>>;
  }>;
  /** Tables of the strategy's own under the wallet (e.g. DCA plans). */
  readonly tables?: ReadonlyArray<{
    readonly title: string;
    readonly columns: readonly string[];
    readonly rows: ReadonlyArray<readonly StatusCell[]>;
  }>;
}

const statusCellSchema = z.strictObject({
  text: z.string().max(500).optional(),
  at: z.number().int().optional(),
  isId: z.boolean().optional(),
  isAlert: z.boolean().optional(),
});
/** What the engine accepts from a `statusView` hook. */
export const statusViewSchema = z.strictObject({
  positions: z
    .record(
      z.string(),
      z.strictObject({
        realizableMicroUsd: z
          .string()
          .regex(/^\d{1,18}$/, "expected micro-USD as an integer string")
          .optional(),
        nearestRule: z.string().max(100).optional(),
        nearestDetail: z.string().max(500).optional(),
        isAlert: z.boolean().optional(),
      }),
    )
    .optional(),
  next: z.array(z.strictObject({ text: z.string().max(500), at: z.number().int().optional() })).optional(),
  positionColumns: z
    .array(
      z.strictObject({
        key: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, "expected a short lowercase name"),
        label: z.string().max(100),
        cells: z.record(z.string(), statusCellSchema),
      }),
    )
    .optional(),
  tables: z
    .array(
      z.strictObject({
        title: z.string().max(100),
        columns: z.array(z.string().max(100)),
        rows: z.array(z.array(statusCellSchema)),
      }),
    )
    .optional(),
});

/**
 * What a `statusView` hook is given: the wallet's positions as the last poll saw them, its state, and
 * the config as loaded (the page reads no service, so token fields are as the file wrote them).
 */
export interface StatusInput<C> {
  readonly config: C;
  readonly state: Readonly<Record<string, unknown>>;
  readonly positions: readonly Position[];
  readonly nowSeconds: number;
}

/**
 * What a strategy is asked right before one of its closes is built: the position as the service
 * answers it now (read one by one, not from the poll's list), the strategy's state as the last poll
 * left it, and the rule the close named.
 */
export interface CloseCheckInput<C> {
  readonly config: C;
  readonly position: Position;
  readonly state: Readonly<Record<string, unknown>>;
  /** The close intent's `exitRule`, when it named one. */
  readonly exitRule?: string;
  readonly nowSeconds: number;
  /** The position's event details, when the strategy needs them (`needs().events`) and they could be read. */
  readonly event?: EventDetails;
}

/** `isDue: false` drops the close (nothing is built); `reason` says why, for the ledger and logs. */
export interface CloseCheck {
  readonly isDue: boolean;
  readonly reason: string;
}

export const closeCheckSchema = z.strictObject({ isDue: z.boolean(), reason: z.string().max(500) });

/**
 * One winning position as the holdings index keeps it, for a claim decided without reading the
 * wallet's positions again. Amounts are integer strings.
 */
export interface IndexedWinner {
  readonly wallet: string;
  readonly position: string;
  readonly marketId: string;
  readonly eventId: string;
  /** The side held: the market's result. */
  readonly side: "yes" | "no";
  /** The exact count held (micro-contracts), when the service sent one; absent otherwise. */
  readonly contractsMicro?: string;
  /** What the position cost (micro-USD). */
  readonly costUsd: string;
}

/**
 * What a strategy is asked when the market watcher sees a market resolve on the side a wallet holds:
 * the index's entry, the market as the watcher read it (its result, and the fields of its provider),
 * and what one claim costs now when the strategy needs it (`needs().claimCost`).
 */
export interface IndexClaimInput<C> {
  readonly config: C;
  readonly entry: IndexedWinner;
  readonly market: Market;
  readonly claimCostMicroUsd?: string;
  readonly nowSeconds: number;
}

/**
 * The answer: `intent` (a claim of `entry.position`, or the record of one left to the service) is
 * admitted and built like a poll's; without one, nothing is to be claimed (`reason` says why). An
 * answer of `undefined` means the entry does not say enough: the wallet is polled, as without the hook.
 */
export interface IndexClaim {
  readonly intent?: Intent;
  readonly reason?: string;
}

/** The hooks, all optional; the engine uses a default for each one a strategy leaves out. */
export interface StrategyHooks<C> {
  /** Default: nothing beyond positions and pending orders. */
  needs?(config: C): SnapshotNeeds;
  /** Default: no field names a token (the config is passed on as it is). */
  tokenFields?(config: C): readonly TokenField[];
  /**
   * Checks that need the resolved tokens (their decimals, their price), on the config with mints;
   * `tokens` has the tokens that resolved, by mint. Default: none.
   */
  checkTokens?(config: C, tokens: ReadonlyMap<string, TokenFacts>): readonly ConfigProblem[];
  /**
   * The mints its intents spend and receive, per spending kind, from the config with mints: the
   * signer's allowed mints of a kind that `signer.limits.allowedMints` leaves unset. Asked of
   * built-in strategies only (the signer never runs a user module). Default: spends nothing.
   */
  spends?(config: C): readonly Spending[];
  /** Default: none (the watcher polls the holder only when its market resolves). */
  priceThresholds?(config: C, position: Position, event?: EventDetails): PriceThresholds | undefined;
  /** Default: nothing beyond the page's own columns. */
  statusView?(input: StatusInput<C>): StatusView;
  /**
   * Read before selling: whether a close this strategy asked for is still due on the position as
   * read just before its build (the engine has already checked that the position is still open).
   * Default: still due.
   */
  closeStillDue?(input: CloseCheckInput<C>): CloseCheck;
  /**
   * A claim from the holdings index: when a market resolves, the claim of each indexed winner is
   * decided from its entry, with no read of the wallet's positions. Default: the winner's wallet is
   * polled, and `evaluate` decides.
   */
  claimFromIndex?(input: IndexClaimInput<C>): IndexClaim | undefined;
}

/** The hook names, for checking a user module's exports. */
export const STRATEGY_HOOK_NAMES = [
  "needs",
  "tokenFields",
  "checkTokens",
  "spends",
  "priceThresholds",
  "statusView",
  "closeStillDue",
  "claimFromIndex",
] as const satisfies ReadonlyArray<keyof StrategyHooks<unknown>>;
