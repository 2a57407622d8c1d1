import type { IntentKind } from "../core/intent.js";
import { formatUsd } from "../core/money.js";
import type { SignEvents, SignOutcome } from "../keeper/pipeline/sign-worker.js";
import type { KeeperMetrics } from "../ops/metrics.js";
import type { Notifier } from "../ops/notifier.js";

interface OutcomeRow {
  key: string;
  kind: IntentKind;
  wallet: string;
  strategy: string;
  amountMicroUsd?: string;
  tries: number;
}

/** A transaction's outcome, whether the sign job or the confirm loop reached it, as metrics and a webhook. */
export function outcomeEvents(metrics: KeeperMetrics, notifier: Notifier | undefined): SignEvents {
  return {
    onOutcome: (row: OutcomeRow, outcome: SignOutcome) => {
      const seconds =
        outcome.outcome === "confirmed" && outcome.confirmationMs !== undefined
          ? outcome.confirmationMs / 1000
          : undefined;
      metrics.recordTransaction(row.kind, outcome.outcome, seconds);
      if (outcome.outcome === "refused")
        metrics.policyRefusals.inc({ kind: row.kind, reason: outcome.reason });
      if (outcome.outcome === "confirmed" && row.kind === "claim" && row.amountMicroUsd)
        metrics.addClaimedMicroUsd(BigInt(row.amountMicroUsd));
      if (notifier) notify(notifier, row, outcome);
    },
  };
}

function notify(notifier: Notifier, row: OutcomeRow, outcome: SignOutcome) {
  const base = { wallet: row.wallet, intent: row.key, intentKind: row.kind };
  switch (outcome.outcome) {
    case "confirmed":
      notifier.notify({
        kind: "confirmed",
        ...base,
        signature: outcome.signature,
        strategy: row.strategy,
        ...(row.amountMicroUsd ? { amountUsd: formatUsd(BigInt(row.amountMicroUsd)) } : {}),
      });
      break;
    case "refused":
      notifier.notify({
        kind: "refused",
        ...base,
        reason: outcome.reason,
        detail: outcome.detail,
        tries: row.tries,
      });
      break;
    case "failed":
      notifier.notify({ kind: "failed", ...base, error: outcome.error });
      break;
    case "expired":
      break;
  }
}
