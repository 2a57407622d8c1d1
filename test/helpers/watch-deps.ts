import type { SignDeps } from "../../src/keeper/pipeline/sign-worker.js";
import { type WatchAttemptInput, watchAttempt } from "../../src/signer/sign-transaction.js";

/** A sign job's watch, wired as src/app/signer-role.ts wires it: the recorded attempt to its outcome. */
export function watchDepsFor(
  input: Omit<WatchAttemptInput, "intentKey" | "resumed">,
): Pick<SignDeps, "watch" | "hasSentAttempt"> {
  return {
    watch: (intentKey, resumed, _row, record) =>
      watchAttempt({ ...input, intentKey, resumed, ...(record ? { record } : {}) }),
    hasSentAttempt: async (intentKey) => (await input.attempts.get(intentKey))?.status === "sent",
  };
}
