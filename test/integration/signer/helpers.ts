import type { Logger } from "pino";
import { type CaptureStream, createCaptureStream } from "../../../src/ops/capture-stream.js";
import { createLogger } from "../../../src/ops/logger.js";

/** A real Keeper logger (redaction included) writing JSON lines into memory. */
export function captureLogger(level: "debug" | "info" = "debug"): {
  logger: Logger;
  capture: CaptureStream;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  const capture = createCaptureStream();
  const logger = createLogger({ level, pretty: false, destination: capture });
  return { logger, capture, lines: () => capture.records(), text: () => capture.text() };
}
