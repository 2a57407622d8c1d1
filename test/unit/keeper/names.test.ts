import { describe, expect, it } from "vitest";
import {
  jobIds,
  QUEUES,
  type RecordTry,
  type RedisKeys,
  redisKeys,
  redisKeysOf,
} from "../../../src/keeper/names.js";

/** Every key a keeper writes, by name, for wallet `w`, market `m`, intent `k` and strategy `s`. */
function everyKey(keys: RedisKeys): Record<string, string> {
  return {
    ledgerIntent: keys.ledgerIntent("k"),
    ledgerIndex: keys.ledgerIndex,
    ledgerInFlight: keys.ledgerInFlight("w"),
    ledgerTriggerOrders: keys.ledgerTriggerOrders("w"),
    strategyState: keys.strategyState("w", "s"),
    lastPoll: keys.lastPoll("w"),
    lastPolls: keys.lastPolls,
    pollSeen: keys.pollSeen("w"),
    paused: keys.paused,
    pauseMarker: keys.pauseMarker,
    readinessProbe: keys.readinessProbe,
    pollLock: keys.pollLock("w"),
    counters: keys.counters,
    protectionsExits: keys.protectionsExits,
    protectionsResets: keys.protectionsResets,
    protectionsSeen: keys.protectionsSeen,
    holdingsMarkets: keys.holdingsMarkets,
    holdingsMarket: keys.holdingsMarket("m"),
    holdingsOfWallet: keys.holdingsOfWallet("w"),
    holdingsWallets: keys.holdingsWallets,
    watchStates: keys.watchStates,
    watchCooldown: keys.watchCooldown("w", "m"),
    signerSpent: keys.signerSpent,
    valueWallets: keys.valueWallets,
    valueTotal: keys.valueTotal,
    valueSamples: keys.valueSamples,
    attemptsPrefix: keys.attemptsPrefix,
    queuePrefix: keys.queuePrefix(QUEUES.sign),
  };
}

describe("Redis key names", () => {
  it("keeps a single Redis's names as they always were, so an upgrade finds its ledger and queues", () => {
    expect(everyKey(redisKeys("keeper", "live"))).toEqual({
      ledgerIntent: "keeper:ledger:intent:k",
      ledgerIndex: "keeper:ledger:index",
      ledgerInFlight: "keeper:ledger:inflight:w",
      ledgerTriggerOrders: "keeper:ledger:triggers:w",
      strategyState: "keeper:state:w:s",
      lastPoll: "keeper:poll:last:w",
      lastPolls: "keeper:poll:polled-at",
      pollSeen: "keeper:poll:seen:w",
      paused: "keeper:paused",
      pauseMarker: "keeper:paused:marker",
      readinessProbe: "keeper:readiness",
      pollLock: "keeper:poll:lock:w",
      counters: "keeper:counters",
      protectionsExits: "keeper:protections:exits",
      protectionsResets: "keeper:protections:resets",
      protectionsSeen: "keeper:protections:seen",
      holdingsMarkets: "keeper:holdings:markets",
      holdingsMarket: "keeper:holdings:market:m",
      holdingsOfWallet: "keeper:holdings:wallet:w",
      holdingsWallets: "keeper:holdings:wallets",
      watchStates: "keeper:watch:states",
      watchCooldown: "keeper:watch:cooldown:w:m",
      signerSpent: "keeper:signer:spent",
      valueWallets: "keeper:value:wallets",
      valueTotal: "keeper:value:total",
      valueSamples: "keeper:value:samples",
      attemptsPrefix: "keeper:",
      queuePrefix: "keeper-bull",
    });
    expect(redisKeysOf({ mode: "live", redis: { prefix: "keeper" } })).toMatchObject({
      bullPrefix: "keeper-bull",
    });
  });

  it("hash-tags each concern and each queue on a cluster; pause stays shared by both modes", () => {
    const keys = redisKeysOf({ mode: "dry-run", redis: { prefix: "keeper", cluster: ["127.0.0.1:7000"] } });
    const tagOf = (key: string) => /^\{([^}]+)\}/.exec(key)?.[1];
    expect(tagOf(keys.ledgerIntent("k"))).toBe("keeper-dry-run:ledger");
    expect(tagOf(keys.ledgerInFlight("w"))).toBe("keeper-dry-run:ledger");
    expect(tagOf(keys.holdingsMarket("m"))).toBe("keeper-dry-run:holdings");
    expect(tagOf(keys.pollSeen("w"))).toBe("keeper-dry-run:poll");
    expect(tagOf(keys.watchCooldown("w", "m"))).toBe("keeper-dry-run:watch");
    expect(keys.paused).toBe("{keeper:paused}");
    // The marker is read and written with the switch, in one command or script: one slot.
    expect(tagOf(keys.pauseMarker)).toBe("keeper:paused");
    expect(tagOf(keys.readinessProbe)).toBe("keeper-dry-run:readiness");
    expect(Object.values(QUEUES).map((q) => keys.queuePrefix(q))).toEqual([
      "{keeper-dry-run-bull:poll}",
      "{keeper-dry-run-bull:actions}",
      "{keeper-dry-run-bull:sign}",
      "{keeper-dry-run-bull:confirm}",
    ]);
  });
});

describe("job ids of builds and signs", () => {
  it.each<{ at: RecordTry; action: string; sign: string }>([
    // A record an older Keeper admitted has no id: its jobs keep the ids they were queued under.
    { at: { tries: 1 }, action: "act-claim-p-t1-2", sign: "sign-claim-p-t1-2" },
    {
      at: { tries: 3, recordId: "0a1b2c3d4e5f" },
      action: "act-claim-p-r0a1b2c3d4e5f-t3-2",
      sign: "sign-claim-p-r0a1b2c3d4e5f-t3-2",
    },
  ])("names the intent, the record, the try and the build: $action", ({ at, action, sign }) => {
    expect(jobIds.action("claim-p", at, 2)).toBe(action);
    expect(jobIds.sign("claim-p", at, 2)).toBe(sign);
    expect(jobIds.confirm(jobIds.sign("claim-p", at, 2), 1)).toBe(`confirm-${sign}-a1`);
  });

  it("differs between two records of one key, and never holds a ':' (BullMQ refuses one)", () => {
    const ids = [{ recordId: "0a1b2c3d4e5f" }, { recordId: "f5e4d3c2b1a0" }, {}].map((record) =>
      jobIds.action("claim-p", { tries: 1, ...record }, 1),
    );
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).not.toContain(":");
  });
});
