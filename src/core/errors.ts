/**
 * The error hierarchy that drives behaviour. Code branches on the class, never on a message.
 * - ConfigError: stop start-up, exit code 2.
 * - TransientError: retry with backoff.
 * - PermanentError: fail the job without further attempts.
 * - PolicyRefusal: what the transaction does is wrong; recorded, never retried as is.
 * - StaleTransaction: the transaction cannot land as built (its blockhash is past or unknown to the
 *   node); nothing is wrong with what it does: it is rebuilt, never recorded as a refusal.
 * - SubmitRefused: an execute endpoint refused a signed transaction before acting on it.
 */
export class KeeperError extends Error {
  override readonly name: string = "KeeperError";
}

export class ConfigError extends KeeperError {
  override readonly name: string = "ConfigError";
  /** Every problem found, each as `path: rule`. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.problems = problems;
  }
}

/** A command-line argument or variable the command cannot act on (an unknown key, say): exit code 2. */
export class UsageError extends KeeperError {
  override readonly name: string = "UsageError";
}

export class TransientError extends KeeperError {
  override readonly name: string = "TransientError";
}

export class PermanentError extends KeeperError {
  override readonly name: string = "PermanentError";
}

export class PolicyRefusal extends KeeperError {
  override readonly name: string = "PolicyRefusal";
  /** A bounded reason code, usable as a metric label. */
  readonly reason: string;
  readonly detail: string;
  constructor(reason: string, detail: string) {
    super(`${reason}: ${detail}`);
    this.reason = reason;
    this.detail = detail;
  }
}

export class StaleTransaction extends KeeperError {
  override readonly name: string = "StaleTransaction";
  readonly detail: string;
  constructor(detail: string) {
    super(`stale transaction: ${detail}`);
    this.detail = detail;
  }
}

/**
 * An execute endpoint refused the request before acting on it (a bad request, a key refused, a body the
 * client would not send): the signed transaction did not go to the chain through it. Any other answer,
 * `Failed` included, proves nothing of the kind: the chain's word decides.
 */
export class SubmitRefused extends PermanentError {
  override readonly name: string = "SubmitRefused";
}
