import { describe, expect, it } from "vitest";
import { scrubberFor } from "../../../src/cli/config-scrubber.js";
import { KeeperSecrets } from "../../../src/config/load-config.js";
import { REDACTED } from "../../../src/ops/secret-scrubber.js";

const FILE_PASSWORD = "redis-file-password-6a1c9e3f";
const URL_PASSWORD = "redis-url-password-2b8d4f0a";

function configWith(redisUrl: string, redisPassword?: string): Parameters<typeof scrubberFor>[0] {
  return {
    secrets: new KeeperSecrets(undefined, undefined, undefined, redisPassword),
    rpc: { url: "http://127.0.0.1:8899", sendUrls: [], commitment: "confirmed" },
    redis: { url: redisUrl, prefix: "keeper" },
  };
}

describe("the scrubber built from the config", () => {
  it("removes redis.passwordFile's password from a log line", () => {
    const scrubber = scrubberFor(configWith("redis://redis:6379", FILE_PASSWORD));
    const line = JSON.stringify({ msg: `AUTH ${FILE_PASSWORD} failed`, host: "redis" });
    expect(scrubber.scrub(line)).toBe(JSON.stringify({ msg: `AUTH ${REDACTED} failed`, host: "redis" }));
  });

  it("removes a password written into redis.url, as typed and percent-encoded, and keeps the host", () => {
    const encoded = "p%40ss-word-in-the-url-0123";
    const scrubber = scrubberFor(configWith(`redis://:${URL_PASSWORD}@redis:6379`));
    expect(scrubber.scrub(`connecting to redis://:${URL_PASSWORD}@redis:6379`)).toBe(
      `connecting to redis://:${REDACTED}@redis:6379`,
    );
    const withEncoded = scrubberFor(configWith(`redis://user:${encoded}@redis:6379/0`));
    expect(withEncoded.scrub(`a ${encoded} b p@ss-word-in-the-url-0123 c`)).toBe(
      `a ${REDACTED} b ${REDACTED} c`,
    );
  });
});
