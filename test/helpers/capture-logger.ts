import type { Logger } from "pino";
import { type CaptureStream, createCaptureStream } from "../../src/ops/capture-stream.js";
import { createLogger } from "../../src/ops/logger.js";
import { recordTestOutput } from "./test-secrets.js";

/**
 * A real Keeper logger (redaction included) writing JSON lines into memory, for the test to read, and
 * to the suite's log directory, where the secret scan reads them with everything else.
 */
export function captureLogger(level: "debug" | "info" = "debug"): {
  logger: Logger;
  capture: CaptureStream;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  const capture = createCaptureStream();
  const logger = createLogger({
    level,
    pretty: false,
    destination: {
      write(line: string) {
        capture.write(line);
        recordTestOutput("captured", line);
      },
    },
  });
  return { logger, capture, lines: () => capture.records(), text: () => capture.text() };
}
