import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { redisScript } from "../../ops/redis-script.js";
import type { RedisKeys } from "../names.js";

/** The switch as `keeper status` and the status page show it. */
export interface PauseState {
  paused: boolean;
  reason?: string;
  since?: number;
}

/** A switch that is on. */
export type PausedState = PauseState & { paused: true };

export interface PauseSwitchOptions {
  /** Where the one warning goes when Redis lost its data and the pause is put back. */
  logger?: Logger;
  /** Called once the pause is put back by this process (a notification), after the warning. */
  onRestored?: (state: PausedState) => void;
}

/**
 * Puts the switch back unless the marker is there again (another process put it back, or an operator
 * paused or resumed since): answers whether it was put back, and the switch as it now is.
 */
const restoreScript = redisScript<[number, string | null]>(
  "keeperPauseRestore",
  2,
  `if redis.call('EXISTS', KEYS[2]) == 1 then return {0, redis.call('GET', KEYS[1])} end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], '1')
return {1, ARGV[1]}`,
);

/**
 * The pause switch lives in Redis so every role on every machine honours it within one tick.
 *
 * A Redis restarted without its data would lift it by itself, so the switch has a marker, written
 * with every pause and resume and never removed: a process that saw the switch on remembers it, and
 * when it finds the marker gone, Redis lost its data and the process puts the switch back. Without the
 * marker a switch that is off proves nothing, so a process that never saw it on writes nothing (a
 * process started after the loss learns of the pause from one that saw it, within that one's tick).
 */
export class PauseSwitch {
  /** The switch's stored value as last seen on, while it was; undefined while it was seen off. */
  #seenOn: string | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly options: PauseSwitchOptions = {},
  ) {}

  async isPaused(): Promise<boolean> {
    return (await this.#read()) !== null;
  }

  async pause(reason: string, nowSeconds: number): Promise<void> {
    const value = JSON.stringify({ reason, since: nowSeconds });
    // One command (one slot): a refusal (OOM, READONLY) reaches the operator as Redis said it.
    await this.redis.mset(this.keys.paused, value, this.keys.pauseMarker, "1");
    this.#seenOn = value;
  }

  async resume(): Promise<void> {
    // The marker first: a resume that stops half-way leaves the switch on, and marked.
    await this.redis.set(this.keys.pauseMarker, "1");
    await this.redis.del(this.keys.paused);
    this.#seenOn = undefined;
  }

  /** The switch as stored, for a person (a plain read: restoring it is the running processes' job). */
  async status(): Promise<PauseState> {
    const raw = await this.redis.get(this.keys.paused);
    return raw === null ? { paused: false } : parseSwitch(raw);
  }

  /** The switch's stored value (null while off), the one read of every check: one MGET. */
  async #read(): Promise<string | null> {
    const [raw = null, marker = null] = await this.redis.mget(this.keys.paused, this.keys.pauseMarker);
    if (marker !== null) {
      this.#seenOn = raw ?? undefined;
      return raw;
    }
    if (raw !== null) {
      // A switch set before markers existed: the data is here, so mark it.
      await this.redis.set(this.keys.pauseMarker, "1", "NX");
      this.#seenOn = raw;
      return raw;
    }
    return this.#seenOn === undefined ? null : this.#restore(this.#seenOn);
  }

  async #restore(value: string): Promise<string | null> {
    const [restored, now] = await restoreScript(this.redis, this.keys.paused, this.keys.pauseMarker, value);
    this.#seenOn = now ?? undefined;
    if (restored !== 1) return now;
    const state = parseSwitch(value);
    this.options.logger?.warn(
      { reason: state.reason, since: state.since },
      "redis lost its data (the pause switch's marker is gone): the pause is restored; Keeper stays paused until `keeper resume`",
    );
    this.options.onRestored?.(state);
    return now;
  }
}

function parseSwitch(raw: string): PausedState {
  const parsed = JSON.parse(raw) as { reason?: string; since?: number };
  return { paused: true, ...parsed };
}
