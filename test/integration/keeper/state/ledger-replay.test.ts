import { createServer, type Server, connect as tcpConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import { redisKeys } from "../../../../src/keeper/names.js";
import { Ledger } from "../../../../src/keeper/state/ledger.js";
import { connectRedis } from "../../../../src/keeper/state/redis-connection.js";
import { REDIS_URL, testRedis } from "../../../helpers/redis.js";

/**
 * A connection that drops after Redis ran an admission but before its answer came back: ioredis sends
 * the same command again on its new connection. The second run must not turn the admission it
 * replays into "not admitted, in flight" (the intent would then wait, unbuilt, for housekeeping).
 */
describe("an admission replayed after its answer was lost", () => {
  let base: Awaited<ReturnType<typeof testRedis>>;
  let proxy: Server;
  let proxyPort = 0;
  /** The proxy drops the connection instead of answering the next command naming this text. */
  let dropAnswerTo: string | undefined;

  beforeAll(async () => {
    base = await testRedis("ledger-replay");
    const upstreamUrl = new URL(REDIS_URL);
    proxy = createServer((client) => {
      const upstream = tcpConnect(Number(upstreamUrl.port || 6379), upstreamUrl.hostname);
      let dropping = false;
      client.on("data", (chunk) => {
        if (dropAnswerTo !== undefined && chunk.toString().includes(dropAnswerTo)) {
          dropAnswerTo = undefined;
          dropping = true;
        }
        upstream.write(chunk);
      });
      upstream.on("data", (chunk) => {
        if (!dropping) return void client.write(chunk);
        client.destroy();
        upstream.destroy();
      });
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        a.on("error", () => b.destroy());
        a.on("close", () => b.destroy());
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const address = proxy.address();
    proxyPort = typeof address === "object" && address ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await base?.cleanup();
  });

  it("is answered admitted, once, and a later admission of the key is refused as in flight", async () => {
    const redis = await connectRedis({ url: `redis://127.0.0.1:${proxyPort}` });
    try {
      const ledger = new Ledger(redis, redisKeys(base.prefix, "live"));
      const intent: Intent = {
        kind: "claim",
        key: "claim-ReplayedAdmission",
        wallet: "ReplayWallet1111111111111111111111111111111",
        strategy: "auto-claim",
        positionPubkey: "ReplayPosition111111111111111111111111111111",
      };
      dropAnswerTo = intent.key;
      const result = await ledger.admit(intent);
      expect(dropAnswerTo).toBeUndefined(); // the answer was dropped, and the command sent again
      expect(result).toMatchObject({ admitted: true, tries: 1 });
      expect(await ledger.get(intent.key)).toMatchObject({ status: "pending", tries: 1 });
      // Another admission of the same key (a second poll) is the ledger's refusal, as ever.
      expect(await ledger.admit(intent)).toMatchObject({ admitted: false, status: "pending" });
    } finally {
      redis.disconnect();
    }
  });
});
