import type { Redis } from "ioredis";
import type { RedisKeys } from "../names.js";

/** The pause switch lives in Redis so every role on every machine honours it within one tick. */
export class PauseSwitch {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async isPaused(): Promise<boolean> {
    return (await this.redis.exists(this.keys.paused)) === 1;
  }

  async pause(reason: string, nowSeconds: number): Promise<void> {
    await this.redis.set(this.keys.paused, JSON.stringify({ reason, since: nowSeconds }));
  }

  async resume(): Promise<void> {
    await this.redis.del(this.keys.paused);
  }

  async status(): Promise<{ paused: boolean; reason?: string; since?: number }> {
    const raw = await this.redis.get(this.keys.paused);
    if (raw === null) return { paused: false };
    const parsed = JSON.parse(raw) as { reason?: string; since?: number };
    return { paused: true, ...parsed };
  }
}
