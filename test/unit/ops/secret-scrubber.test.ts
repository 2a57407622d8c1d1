import { createHash } from "node:crypto";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { createLogger } from "../../../src/ops/logger.js";
import { secretForms, urlSecrets } from "../../../src/ops/secret-forms.js";
import { REDACTED, SecretScrubber } from "../../../src/ops/secret-scrubber.js";

// A fixed 64-byte "keypair": deterministic, no crypto needed to test text handling.
const secretKey = Uint8Array.from({ length: 64 }, (_, index) => (index * 37 + 11) % 256);
const seed = secretKey.subarray(0, 32);
const publicHalf = secretKey.subarray(32);
const apiKey = "sk_live_0123456789abcdef";

function scrubbedLogger() {
  const scrubber = new SecretScrubber([apiKey, ...secretForms(secretKey)]);
  const capture = createCaptureStream();
  const logger = createLogger({ level: "info", pretty: false, destination: capture, scrubber });
  return { capture, logger, scrubber };
}

describe("secretForms", () => {
  it("lists base58, base64, hex and JSON-array forms of the key and of its seed", () => {
    const forms = secretForms(secretKey);
    expect(forms).toContain(bs58.encode(secretKey));
    expect(forms).toContain(Buffer.from(secretKey).toString("base64"));
    expect(forms).toContain(Buffer.from(secretKey).toString("hex"));
    expect(forms).toContain(JSON.stringify(Array.from(secretKey)));
    expect(forms).toContain(bs58.encode(seed));
  });

  it("never lists the public half, which is logged on purpose", () => {
    expect(secretForms(secretKey)).not.toContain(bs58.encode(publicHalf));
  });
});

describe("urlSecrets", () => {
  const pathKey = "a1b2c3d4e5f6a7b8c9d0e1f2";
  const queryKey = "4f1c9a0e-7d2b-4e3a-9c1f-2b8d6e0a5c73";

  it.each([
    ["a key in the path", `https://node.example.com/v2/${pathKey}`, pathKey],
    ["a key in the query", `https://node.example.com/?api-key=${queryKey}`, queryKey],
    ["a password", "https://user:hunter2hunter2@node.example.com/", "hunter2hunter2"],
  ])("scrubs %s from a log line but keeps the host", (_where, url, key) => {
    const scrubber = new SecretScrubber(urlSecrets(url));
    const capture = createCaptureStream();
    const logger = createLogger({ level: "info", pretty: false, destination: capture, scrubber });
    logger.warn({ url }, `send to ${url} failed`);
    expect(capture.contains(key)).toBe(false);
    expect(capture.contains("node.example.com")).toBe(true);
  });

  it("leaves short path segments and query values alone: they are words, not keys", () => {
    expect(urlSecrets("https://node.example.com/solana/v1?cluster=mainnet")).toEqual([]);
  });
});

describe("SecretScrubber", () => {
  const leaks: Array<[string, string]> = [
    ["api key", apiKey],
    ["base58", bs58.encode(secretKey)],
    ["base64", Buffer.from(secretKey).toString("base64")],
    ["JSON array", JSON.stringify(Array.from(secretKey))],
    ["spaced JSON array", `[${Array.from(secretKey).join(", ")}]`],
    ["seed in base58", bs58.encode(seed)],
  ];

  it.each(leaks)("scrubs the %s form from a free-text message", (_form, leaked) => {
    const { capture, logger } = scrubbedLogger();
    logger.warn(`unexpected text from a library: ${leaked} (end)`);
    expect(capture.contains(leaked)).toBe(false);
    expect(capture.records()[0]?.msg).toBe(`unexpected text from a library: ${REDACTED} (end)`);
  });

  it.each(leaks)("scrubs the %s form from a field redaction paths do not know", (_form, leaked) => {
    const { capture, logger } = scrubbedLogger();
    logger.info({ response: { body: leaked } }, "response");
    expect(capture.contains(leaked)).toBe(false);
  });

  it("leaves nothing for a suite-wide scan to find", () => {
    const { capture, logger } = scrubbedLogger();
    const secrets = [apiKey, ...secretForms(secretKey)];
    for (const secret of secrets) logger.info({ data: { blob: secret } }, `leak ${secret}`);
    expect(capture.leaked(secrets)).toEqual([]);
    expect(capture.leaked(["leak"])).toEqual(["leak"]);
  });

  it("scrubs secrets added after the logger was created", () => {
    const { capture, logger, scrubber } = scrubbedLogger();
    const later = "loaded-later-0123456789";
    scrubber.add([later]);
    logger.info(`value ${later}`);
    expect(capture.contains(later)).toBe(false);
  });

  it("matches a secret with JSON-escaped characters inside a JSON line", () => {
    const quoted = 'key"with\\quotes-12345';
    const scrubber = new SecretScrubber([quoted]);
    const capture = createCaptureStream();
    createLogger({ level: "info", pretty: false, destination: capture, scrubber }).info(`got ${quoted}`);
    expect(capture.text()).not.toContain(JSON.stringify(quoted).slice(1, -1));
  });

  it("a fleet's keys added one wallet at a time (5,000): each line is still scrubbed of any of them", () => {
    // Keeper adds each wallet's forms as it loads its key: this must not cost a rebuild of everything
    // so far per wallet (10,000 wallets never started), nor a pass per secret per line.
    const keyOf = (i: number) => Uint8Array.from(createHash("sha512").update(`wallet ${i}`).digest());
    const scrubber = new SecretScrubber([apiKey]);
    for (let i = 0; i < 5_000; i++) scrubber.add(secretForms(keyOf(i)));
    const key = keyOf(4_321);
    const line = `{"msg":"dump ${bs58.encode(key)} and ${JSON.stringify(Array.from(key.subarray(0, 32)))} with ${apiKey}"}`;
    expect(scrubber.scrub(line)).toBe(`{"msg":"dump ${REDACTED} and ${REDACTED} with ${REDACTED}"}`);
    expect(scrubber.scrub("nothing to hide, 1,2,3")).toBe("nothing to hide, 1,2,3");
  }, 20_000);

  it("replaces the longest secret found at the leftmost place, as one", () => {
    const scrubber = new SecretScrubber(["abcdefgh", "abcdefghijkl", "ghijklmnop", "xyz"]);
    expect(scrubber.scrub("..abcdefghijklmnop..")).toBe(`..${REDACTED}mnop..`);
    expect(scrubber.scrub("abcdefghXabcdefgh xyzxyz")).toBe(`${REDACTED}X${REDACTED} ${REDACTED}${REDACTED}`);
    expect(scrubber.scrub("abcdefg ghijklmno")).toBe("abcdefg ghijklmno");
  });

  it("ignores empty secrets and leaves other text alone", () => {
    const scrubber = new SecretScrubber(["", "  "]);
    expect(scrubber.size).toBe(0);
    expect(scrubber.scrub("nothing to hide")).toBe("nothing to hide");
  });

  it("scrubs pretty output too", () => {
    const scrubber = new SecretScrubber([apiKey]);
    const capture = createCaptureStream();
    createLogger({ level: "info", pretty: true, destination: capture, scrubber }).info(
      { note: apiKey },
      "pretty",
    );
    expect(capture.text()).toContain("pretty");
    expect(capture.contains(apiKey)).toBe(false);
  });
});
