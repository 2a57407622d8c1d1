import { createServer } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { createLogger } from "../../../src/ops/logger.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import { type NotificationEvent, Notifier, type NotifierOptions } from "../../../src/ops/notifier.js";
import { SecretScrubber } from "../../../src/ops/secret-scrubber.js";

/** The token part of the webhook URL: it must never show up in a log line. */
const TOKEN_PATH = "/hooks/T000-B000-sEcReTtOkEn42";

interface Receiver {
  url: string;
  bodies: Array<Record<string, unknown>>;
  /** Resolves when the n-th request (1-based) has arrived. */
  arrived(n: number): Promise<void>;
}

type Answer = (request: number) => Promise<number> | number;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A local webhook receiver; `answer` decides each request's status (and may hold it). */
async function startReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const app: FastifyInstance = Fastify();
  const bodies: Array<Record<string, unknown>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  app.post(TOKEN_PATH, async (request, reply) => {
    bodies.push(request.body as Record<string, unknown>);
    for (const waiter of waiters) if (bodies.length >= waiter.n) waiter.resolve();
    const status = await answer(bodies.length);
    return reply.code(status).send({ ok: status < 300 });
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => app.close());
  const address = app.server.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}${TOKEN_PATH}`,
    bodies,
    arrived: (n) =>
      bodies.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
  };
}

function notifierFor(url: string, overrides: Partial<NotifierOptions> = {}) {
  const capture = createCaptureStream();
  const logger = createLogger({ level: "trace", pretty: false, destination: capture });
  const notifier = new Notifier({
    webhookUrl: url,
    logger,
    minRetryDelayMs: 5,
    maxRetryDelayMs: 20,
    ...overrides,
  });
  cleanups.push(async () => {
    await notifier.flush(1_000);
  });
  return { notifier, capture };
}

/** A port nothing listens on: opened, noted, closed. */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** A promise and its resolver, to hold a receiver's answer until the test releases it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const confirmed: NotificationEvent = {
  kind: "confirmed",
  wallet: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
  intent: "claim-5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1",
  intentKind: "claim",
  signature: "3AsdoALgZFuq2oUVWrDYhg2pNeaLJKPLf8hU2mQ6U8qJxeJ6hsrPVpMn9ma39DtfYCrDQSvngWRP8NnTpEhezJpE",
  strategy: "auto-claim",
  amountUsd: "1.50",
};
const stale: NotificationEvent = { kind: "stale", staleWallets: 2, totalWallets: 5, oldestAgeSeconds: 300 };

describe("Notifier", () => {
  it("delivers a Slack- and Discord-compatible message with structured fields", async () => {
    const receiver = await startReceiver();
    const { notifier } = notifierFor(receiver.url);
    notifier.notify(confirmed);
    expect(await notifier.flush(5_000)).toBe(true);
    expect(notifier.stats()).toMatchObject({ delivered: 1, failed: 0, pending: 0 });
    const [body] = receiver.bodies;
    expect(body?.text).toBe(body?.content);
    expect(body?.text).toMatch(/^Keeper: claim confirmed for \$1\.50, wallet 7xKX…gAsU/);
    expect(body?.keeper).toMatchObject({
      event: "confirmed",
      intent: confirmed.intent,
      intentKind: "claim",
      signature: confirmed.signature,
      amountUsd: "1.50",
    });
  });

  it("retries after a 500 and delivers", async () => {
    const receiver = await startReceiver((request) => (request === 1 ? 500 : 200));
    const metrics = createMetrics({ defaultMetrics: false });
    const { notifier } = notifierFor(receiver.url, {
      countOutcome: (outcome) => metrics.recordNotification(outcome),
    });
    notifier.notify(confirmed);
    expect(await notifier.flush(5_000)).toBe(true);
    expect(receiver.bodies).toHaveLength(2);
    expect(notifier.stats()).toMatchObject({ delivered: 1, failed: 0 });
    expect(await metrics.render()).toContain('keeper_notifications_total{outcome="delivered"} 1');
  });

  it("gives up after the bounded retries, and does not retry a 4xx at all", async () => {
    const failing = await startReceiver(() => 503);
    const { notifier } = notifierFor(failing.url, { retries: 2 });
    notifier.notify(confirmed);
    await notifier.flush(5_000);
    expect(failing.bodies).toHaveLength(3);
    expect(notifier.stats().failed).toBe(1);

    const refusing = await startReceiver(() => 404);
    const second = notifierFor(refusing.url, { retries: 5 }).notifier;
    second.notify(confirmed);
    await second.flush(5_000);
    expect(refusing.bodies).toHaveLength(1);
    expect(second.stats().failed).toBe(1);
  });

  it("returns to the caller before the receiver answers", async () => {
    const hold = gate();
    const receiver = await startReceiver(async () => {
      await hold.opened;
      return 200;
    });
    const { notifier } = notifierFor(receiver.url);
    notifier.notify(confirmed);
    // The request reaches the receiver, which has not answered: the caller already carried on.
    await receiver.arrived(1);
    expect(notifier.stats()).toMatchObject({ delivered: 0, pending: 1 });
    hold.open();
    expect(await notifier.flush(5_000)).toBe(true);
    expect(notifier.stats()).toMatchObject({ delivered: 1, pending: 0 });
  });

  it("bounds the queue and counts what it drops", async () => {
    const hold = gate();
    const receiver = await startReceiver(async () => {
      await hold.opened;
      return 200;
    });
    const { notifier } = notifierFor(receiver.url, { maxQueue: 2 });
    for (let index = 0; index < 5; index++) notifier.notify({ ...confirmed, intent: `claim-${index}` });
    expect(notifier.stats()).toMatchObject({ dropped: 3, pending: 2 });
    hold.open();
    await notifier.flush(5_000);
    expect(receiver.bodies).toHaveLength(2);
  });

  it("abandons what is left at flush after its timeout, counted as dropped", async () => {
    const receiver = await startReceiver(() => new Promise<number>(() => {}));
    const { notifier } = notifierFor(receiver.url);
    notifier.notify(confirmed);
    notifier.notify(stale);
    await receiver.arrived(1);
    expect(await notifier.flush(50)).toBe(false);
    expect(notifier.stats()).toMatchObject({ dropped: 1, failed: 1, pending: 0 });
  });

  it("sends the same stale-poll message at most once per window", async () => {
    const receiver = await startReceiver();
    const clock = { nowMs: 1_000_000 };
    const { notifier } = notifierFor(receiver.url, { duplicateWindowMs: 5 * 60_000, now: () => clock.nowMs });
    notifier.notify(stale);
    notifier.notify({ ...stale, staleWallets: 3 });
    clock.nowMs += 4 * 60_000;
    notifier.notify(stale);
    await notifier.flush(5_000);
    expect(receiver.bodies).toHaveLength(1);
    expect(notifier.stats().suppressed).toBe(2);

    clock.nowMs += 2 * 60_000;
    notifier.notify(stale);
    await notifier.flush(5_000);
    expect(receiver.bodies).toHaveLength(2);
  });

  it("only sends the configured kinds of events", async () => {
    const receiver = await startReceiver();
    const { notifier } = notifierFor(receiver.url, { events: ["stale"] });
    notifier.notify(confirmed);
    notifier.notify(stale);
    await notifier.flush(5_000);
    expect(receiver.bodies.map((body) => (body.keeper as { event: string }).event)).toEqual(["stale"]);
  });

  it("never writes the webhook URL to the logs, whatever fails", async () => {
    const refusing = await startReceiver(() => 403);
    const cases = [refusing.url, `http://127.0.0.1:${await unusedPort()}${TOKEN_PATH}`];
    for (const url of cases) {
      const { notifier, capture } = notifierFor(url, { retries: 1 });
      notifier.notify(confirmed);
      await notifier.flush(5_000);
      expect(notifier.stats().failed).toBe(1);
      expect(capture.records().some((record) => record.msg === "notification not delivered")).toBe(true);
      expect(capture.contains("sEcReTtOkEn42")).toBe(false);
      expect(capture.contains(url)).toBe(false);
    }
  });

  it("scrubs known secrets from free-text details before sending", async () => {
    const receiver = await startReceiver();
    const apiKey = "sk_live_notifier_0123456789";
    const { notifier } = notifierFor(receiver.url, { scrubber: new SecretScrubber([apiKey]) });
    notifier.notify({
      kind: "failed",
      wallet: confirmed.wallet,
      intent: confirmed.intent,
      intentKind: "claim",
      error: `request with x-api-key ${apiKey} failed`,
    });
    await notifier.flush(5_000);
    expect(JSON.stringify(receiver.bodies)).not.toContain(apiKey);
    expect(receiver.bodies).toHaveLength(1);
  });

  it("scrubs a secret before the message defangs it (a dotted token would no longer be found)", async () => {
    const receiver = await startReceiver();
    const token = "sk.live.0123456789abcdef";
    const { notifier } = notifierFor(receiver.url, { scrubber: new SecretScrubber([token]) });
    notifier.notify({
      kind: "failed",
      wallet: confirmed.wallet,
      intent: confirmed.intent,
      intentKind: "claim",
      error: `rpc https://rpc.example/v2/${token} refused`,
    });
    await notifier.flush(5_000);
    const sent = JSON.stringify(receiver.bodies);
    expect(sent).toContain("[redacted]");
    for (const part of ["0123456789abcdef", "sk.live", "sk[.]live"]) expect(sent).not.toContain(part);
  });

  it("delivers service text with no live mention or link, and keeps Keeper's own formatting", async () => {
    const receiver = await startReceiver();
    const { notifier } = notifierFor(receiver.url);
    const hostile =
      "sim log: @everyone @here @channel <!channel> <!here> <@U123ABC> <@&987654321> <#C42> " +
      "see <http://evil.example/login|click here> or [click](https://evil.example/x), " +
      "https://evil.example/raw, www.evil.example & <https://evil.example>";
    const wallet = confirmed.wallet;
    notifier.notify({ kind: "failed", wallet, intent: "claim-P", intentKind: "claim", error: hostile });
    notifier.notify({
      kind: "refused",
      wallet,
      intent: "close-P",
      intentKind: "close",
      reason: "memo_not_allowed",
      detail: `memo: ${hostile}`,
    });
    notifier.notify({
      kind: "breaker",
      breaker: "api",
      tripped: true,
      detail: `the service said ${hostile}`,
    });
    expect(await notifier.flush(5_000)).toBe(true);
    expect(receiver.bodies).toHaveLength(3);

    const liveInSlack = [/[<>]/, /@(everyone|here|channel)/, /https?:\/\//, /evil\.example/];
    const liveInDiscord = [/<[@#!a-z]/i, /@(everyone|here)/, /\]\(/, /https?:\/\//, /evil\.example/];
    for (const body of receiver.bodies) {
      const text = String(body.text);
      const content = String(body.content);
      for (const live of liveInSlack) expect(text, `${live} in ${text}`).not.toMatch(live);
      for (const live of liveInDiscord) expect(content, `${live} in ${content}`).not.toMatch(live);
      for (const value of Object.values(body.keeper as Record<string, unknown>))
        for (const live of liveInDiscord) expect(String(value)).not.toMatch(live);
      // Nobody is pinged on Discord whatever the text says; Slack links no names and unfurls nothing.
      expect(body.allowed_mentions).toEqual({ parse: [] });
      expect(body).toMatchObject({ link_names: false, unfurl_links: false, unfurl_media: false });
      // The words are still there to read.
      expect(content).toContain("everyone");
      expect(content).toContain("evil[.]example");
      expect(text).toContain("&lt;!channel&gt;");
    }
    const [failed, refused, breaker] = receiver.bodies;
    expect(String(failed?.text)).toMatch(/^Keeper: claim failed: sim log: /);
    expect(String(breaker?.content)).toMatch(/^Keeper: circuit breaker api tripped: the service said /);
    expect(String(refused?.text)).toContain("run `keeper retry close-P`.");
    expect(String(refused?.content)).toContain("run `keeper retry close-P`.");
  });
});
