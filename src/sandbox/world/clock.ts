/** The world's notion of now, in Unix seconds. Everything time-dependent in the world reads it. */
export interface Clock {
  nowSeconds(): number;
  /** Moves the world's now forward by whole seconds (never back); returns the new now. */
  advance(seconds: number): number;
}

/** 2026-01-01T00:00:00Z: the default start of a driven clock, so a seed alone fixes the world. */
export const DEFAULT_GENESIS_SECONDS = 1_767_225_600;

/** A clock that moves only when told to: tests advance it to make markets close, resolve and reprice. */
export class DrivenClock implements Clock {
  private now: number;

  constructor(startSeconds: number = DEFAULT_GENESIS_SECONDS) {
    this.now = Math.floor(startSeconds);
  }

  nowSeconds(): number {
    return this.now;
  }

  advance(seconds: number): number {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError("advance: seconds must be >= 0");
    this.now += Math.floor(seconds);
    return this.now;
  }

  set(seconds: number): number {
    if (!Number.isFinite(seconds)) throw new RangeError("set: seconds must be finite");
    this.now = Math.floor(seconds);
    return this.now;
  }
}

export interface WallClockOptions {
  /** World seconds per real second; 60 makes an hour of market life pass in a minute of demo. */
  readonly speed?: number;
  /** World time at the moment the clock is made; defaults to the real now. */
  readonly startSeconds?: number;
  /** Real time source in ms, for tests of the clock itself. */
  readonly nowMs?: () => number;
}

/** Follows wall time, optionally sped up, for demos where nobody drives the clock. */
export class WallClock implements Clock {
  private readonly speed: number;
  private readonly startMs: number;
  private readonly startSeconds: number;
  private readonly nowMs: () => number;
  /** World seconds added by `advance`. */
  private offsetSeconds = 0;

  constructor(options: WallClockOptions = {}) {
    this.speed = options.speed ?? 1;
    if (!(this.speed > 0)) throw new RangeError("speed must be positive");
    this.nowMs = options.nowMs ?? Date.now;
    this.startMs = this.nowMs();
    this.startSeconds = options.startSeconds ?? Math.floor(this.startMs / 1000);
  }

  nowSeconds(): number {
    return (
      this.startSeconds + this.offsetSeconds + Math.floor(((this.nowMs() - this.startMs) * this.speed) / 1000)
    );
  }

  /** Jumps the world ahead (`keeper sandbox advance`); real time keeps running from there. */
  advance(seconds: number): number {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError("advance: seconds must be >= 0");
    this.offsetSeconds += Math.floor(seconds);
    return this.nowSeconds();
  }
}
