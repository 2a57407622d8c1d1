import { describe, expect, it } from "vitest";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { errorSerializer } from "../../../src/ops/error-serializer.js";
import {
  childLogger,
  createLogger,
  isPrettyFormat,
  type LogFormat,
  REDACT_PATHS,
  SECRET_FIELDS,
} from "../../../src/ops/logger.js";
import { REDACTED, type SecretScrubber } from "../../../src/ops/secret-scrubber.js";

function capturedLogger(scrubber?: SecretScrubber) {
  const capture = createCaptureStream();
  const logger = createLogger({ level: "trace", pretty: false, destination: capture, scrubber });
  return { capture, logger };
}

describe("createLogger redaction", () => {
  const secretObjects: Array<[string, (value: string) => Record<string, unknown>]> = [
    ...SECRET_FIELDS.map((field): [string, (value: string) => Record<string, unknown>] => [
      field,
      (value) => ({ [field]: value }),
    ]),
    ...SECRET_FIELDS.map((field): [string, (value: string) => Record<string, unknown>] => [
      `nested.${field}`,
      (value) => ({ nested: { [field]: value } }),
    ]),
    ['headers["x-api-key"]', (value) => ({ headers: { "x-api-key": value } })],
    ['req.headers["x-api-key"]', (value) => ({ req: { headers: { "x-api-key": value } } })],
    ["config.apiKey", (value) => ({ config: { apiKey: value } })],
    ["config.signer.keys[0].secretKey", (value) => ({ config: { keys: [{ secretKey: value }] } })],
    ["wallet.keypair", (value) => ({ wallet: { keypair: value } })],
    ["a.b.c.privateKey", (value) => ({ a: { b: { c: { privateKey: value } } } })],
  ];

  it.each(secretObjects)("redacts %s", (_path, build) => {
    const { capture, logger } = capturedLogger();
    const value = "s3cr3t-value-that-must-not-appear";
    logger.info(build(value), "event with a secret");
    expect(capture.contains(value)).toBe(false);
    expect(capture.contains(REDACTED)).toBe(true);
  });

  it("keeps non-secret fields and the context of child loggers", () => {
    const { capture, logger } = capturedLogger();
    const child = childLogger(logger, {
      wallet: "W1",
      intent: "claim-P1",
      job: "act-claim-P1-0",
      strategy: "auto-claim",
    });
    child.info({ apiKey: "k-123456789", amountMicroUsd: "1500000" }, "claim confirmed");
    const [record] = capture.records();
    expect(record).toMatchObject({
      level: "info",
      msg: "claim confirmed",
      wallet: "W1",
      intent: "claim-P1",
      job: "act-claim-P1-0",
      strategy: "auto-claim",
      amountMicroUsd: "1500000",
      apiKey: REDACTED,
    });
  });

  it("leaves out context fields that are not given", () => {
    const { capture, logger } = capturedLogger();
    childLogger(logger, { wallet: "W1", intent: undefined }).info("polled");
    expect(Object.keys(capture.records()[0] ?? {})).not.toContain("intent");
  });

  it("configures each secret field at several depths", () => {
    expect(REDACT_PATHS).toContain("apiKey");
    expect(REDACT_PATHS).toContain("*.apiKey");
    expect(REDACT_PATHS).toContain('*["x-api-key"]');
  });
});

describe("errorSerializer", () => {
  it("keeps name, message, class and scalar codes, never attached objects", () => {
    const error = Object.assign(new TypeError("request failed"), {
      code: "ECONNRESET",
      status: 502,
      config: { headers: { "x-api-key": "attached-key-value" } },
      keypair: new Uint8Array([1, 2, 3]),
    });
    const serialized = errorSerializer(error);
    expect(serialized).toMatchObject({ type: "TypeError", name: "TypeError", message: "request failed" });
    expect(serialized.code).toBe("ECONNRESET");
    expect(serialized.status).toBe(502);
    expect(JSON.stringify(serialized)).not.toContain("attached-key-value");
    expect(JSON.stringify(serialized)).not.toContain("keypair");
  });

  it("follows causes by the same rule, a bounded number of levels", () => {
    let error: Error = new Error("root");
    for (let level = 0; level < 10; level++) error = new Error(`level ${level}`, { cause: error });
    let depth = 0;
    for (let current = errorSerializer(error).cause; current; current = current.cause) depth++;
    expect(depth).toBe(3);
  });

  it.each([
    ["a string", "plain text", "plain text"],
    ["an object", { secretKey: "object-held-secret" }, "non-error object"],
    ["a number", 42, "non-error number"],
  ])("describes a thrown %s without dumping it", (_kind, thrown, message) => {
    expect(errorSerializer(thrown).message).toBe(message);
  });

  it("is used for err in log lines", () => {
    const { capture, logger } = capturedLogger();
    const error = Object.assign(new Error("boom"), { request: { apiKey: "never-logged-value" } });
    logger.error({ err: error }, "job failed");
    expect(capture.contains("never-logged-value")).toBe(false);
    expect(capture.records()[0]?.err).toMatchObject({ type: "Error", message: "boom" });
  });
});

describe("log format (ops.logFormat)", () => {
  it.each<[LogFormat, boolean, boolean]>([
    ["auto", true, true],
    ["auto", false, false],
    ["pretty", false, true],
    ["json", true, false],
  ])("%s with a terminal %s writes readable lines: %s", (format, isTerminal, pretty) => {
    expect(isPrettyFormat(format, isTerminal)).toBe(pretty);
  });

  it("pretty: one readable line with the level, the message and the fields; no JSON", () => {
    const capture = createCaptureStream();
    createLogger({ level: "info", format: "pretty", destination: capture }).info(
      { wallet: "w1", intent: "claim-1" },
      "claim confirmed",
    );
    const text = capture.text();
    expect(text).toMatch(/INFO.*claim confirmed/);
    expect(text).toMatch(/wallet: "w1"/);
    expect(() => JSON.parse(text.split("\n")[0] ?? "")).toThrow();
  });

  it("json: one JSON object a line, whatever the terminal", () => {
    const capture = createCaptureStream();
    createLogger({ level: "info", format: "json", destination: capture }).info({ wallet: "w1" }, "polled");
    expect(capture.records()[0]).toMatchObject({ level: "info", msg: "polled", wallet: "w1" });
  });
});
