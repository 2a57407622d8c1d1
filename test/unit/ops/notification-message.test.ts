import { describe, expect, it } from "vitest";
import { buildPayload, dedupeKey, type NotificationEvent } from "../../../src/ops/notification-message.js";

const at = new Date("2026-01-02T03:04:05.000Z");
const wallet = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

describe("buildPayload", () => {
  const cases: Array<[string, NotificationEvent, string]> = [
    [
      "confirmed",
      {
        kind: "confirmed",
        wallet,
        intent: "claim-P",
        intentKind: "claim",
        signature: "5igSig123456789",
        amountUsd: "2.00",
      },
      "Keeper: claim confirmed for $2.00, wallet 7xKX…gAsU, signature 5igS…6789",
    ],
    [
      "refused",
      {
        kind: "refused",
        wallet,
        intent: "close-P",
        intentKind: "close",
        reason: "unknown_program",
        detail: "Prog111",
      },
      "Keeper: close refused by policy: unknown_program (Prog111), wallet 7xKX…gAsU, intent close-P. Nothing was signed: the position is still open. Keeper will not try it again by itself: look at why, then run `keeper retry close-P`.",
    ],
    [
      "failed",
      { kind: "failed", wallet, intent: "claim-P", intentKind: "claim", error: "blockhash expired 3 times" },
      "Keeper: claim failed: blockhash expired 3 times, wallet 7xKX…gAsU, intent claim-P",
    ],
    [
      "stale",
      { kind: "stale", staleWallets: 2, totalWallets: 9, oldestAgeSeconds: 400 },
      "Keeper: 2 of 9 wallets not polled successfully for 400 s",
    ],
    ["breaker", { kind: "breaker", breaker: "rpc", tripped: true }, "Keeper: circuit breaker rpc tripped"],
    [
      "stuck",
      { kind: "stuck", wallet, intent: "claim-P", intentKind: "claim", sendingSeconds: 420 },
      "Keeper: claim stuck sending for 420 s, wallet 7xKX…gAsU, intent claim-P; housekeeping resumes its recorded transaction unless a sign job still runs it",
    ],
    [
      "pause_restored",
      { kind: "pause_restored", reason: "migration", since: 1_700_000_000 },
      "Keeper: Redis lost its data while Keeper was paused (migration): the pause is restored and holds until `keeper resume`. The ledger and the queues went with the data: check them before resuming.",
    ],
  ];

  it.each(cases)("%s: the same text for Slack and Discord, fields under keeper", (kind, event, text) => {
    const payload = buildPayload(event, at);
    expect(payload.text).toBe(text);
    expect(payload.content).toBe(text);
    expect(payload.keeper).toMatchObject({ event: kind, at: "2026-01-02T03:04:05.000Z" });
  });

  it("tells of each claim or close left waiting what to do about it", () => {
    const base = { kind: "refused", wallet, reason: "outflow_sol" } as const;
    const claim = buildPayload({ ...base, intent: "claim-P", intentKind: "claim" }, at).text;
    expect(claim).toContain("the position is still unclaimed");
    expect(claim).toContain("run `keeper retry claim-P`");
    const close = buildPayload({ ...base, intent: "close-P", intentKind: "close" }, at).text;
    expect(close).toContain("the position is still open");
    expect(close).toContain("run `keeper retry close-P`");
  });

  it("keeps the intent exact inside the retry command, and inert in the sentence", () => {
    const event: NotificationEvent = {
      kind: "refused",
      wallet,
      intent: "dca-weekly.sol-@2",
      intentKind: "swap",
      reason: "outflow_token",
    };
    const payload = buildPayload(event, at);
    for (const text of [payload.text, payload.content]) {
      expect(text).toContain("run `keeper retry dca-weekly.sol-@2`");
      expect(text).toContain("intent dca-weekly[.]sol-@\u200b2.");
    }
  });

  it.each([
    ["<!channel> <@U1>", "&lt;!channel&gt; &lt;@\u200bU1&gt;", "<\u200b!channel> <\u200b@\u200bU1>"],
    ["@everyone & @here", "@\u200beveryone &amp; @\u200bhere", "@\u200beveryone & @\u200bhere"],
    ["[x](https://a.example/p)", "[x]\u200b(https[:]//a[.]example/p)", "[x]\u200b(https[:]//a[.]example/p)"],
    ["price 0.55 of 1.5", "price 0.55 of 1.5", "price 0.55 of 1.5"],
  ])("service text %j reaches Slack as %j and Discord as %j", (error, slack, discord) => {
    const payload = buildPayload(
      { kind: "failed", wallet, intent: "claim-P", intentKind: "claim", error },
      at,
    );
    expect(payload.text).toBe(`Keeper: claim failed: ${slack}, wallet 7xKX…gAsU, intent claim-P`);
    expect(payload.content).toBe(`Keeper: claim failed: ${discord}, wallet 7xKX…gAsU, intent claim-P`);
  });

  it("keeps messages within Discord's 2,000 characters", () => {
    const payload = buildPayload(
      { kind: "failed", wallet, intent: "claim-P", intentKind: "claim", error: "x".repeat(10_000) },
      at,
    );
    expect(payload.content.length).toBeLessThanOrEqual(2_000);
    expect(String(payload.keeper.error).length).toBeLessThanOrEqual(300);
  });
});

describe("dedupeKey", () => {
  it.each([
    [{ kind: "stale", staleWallets: 1, totalWallets: 2, oldestAgeSeconds: 9 }, "stale"],
    [{ kind: "breaker", breaker: "api", tripped: false }, "breaker-api-closed"],
    [
      { kind: "refused", wallet, intent: "claim-P", intentKind: "claim", reason: "outflow" },
      "refused-claim-P-1-outflow",
    ],
    [
      { kind: "refused", wallet, intent: "claim-P", intentKind: "claim", reason: "outflow", tries: 2 },
      "refused-claim-P-2-outflow",
    ],
  ] as Array<[NotificationEvent, string]>)("%o -> %s", (event, key) => {
    expect(dedupeKey(event)).toBe(key);
  });

  it("treats stale messages with different counts as the same message", () => {
    expect(dedupeKey({ kind: "stale", staleWallets: 1, totalWallets: 2, oldestAgeSeconds: 9 })).toBe(
      dedupeKey({ kind: "stale", staleWallets: 2, totalWallets: 2, oldestAgeSeconds: 99 }),
    );
  });
});
