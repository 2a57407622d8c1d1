import type { SignDeps } from "../../src/keeper/pipeline/sign-worker.js";
import { sentAttemptOf } from "../../src/signer/attempt-store.js";
import { type WatchAttemptInput, watchAttempt } from "../../src/signer/sign-transaction.js";

/** A sign job's watch, wired as src/app/signer-role.ts wires it: the recorded attempt to its outcome. */
export function watchDepsFor(
  input: Omit<WatchAttemptInput, "intentKey" | "resumed">,
): Pick<SignDeps, "watch" | "sentAttempt"> {
  return {
    watch: (intentKey, resumed, _row, record) =>
      watchAttempt({ ...input, intentKey, resumed, ...(record ? { record } : {}) }),
    sentAttempt: (intentKey) => sentAttemptOf(input.attempts, intentKey),
  };
}
