import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/** The API key every end-to-end test uses: distinctive, so the log scan can look for it. */
export const TEST_API_KEY = "e2e-api-key-7f3c9a1d5b2e8f4c6a0d9e7b3c1f5a8d";

/** Where the suite's output is collected for the secret scan (set by test/setup/global-log-dir.ts). */
export function testLogDir(): string | undefined {
  return process.env.KEEPER_TEST_LOG_DIR;
}

/** Appends text to this process's file in the suite's log directory, when there is one. */
export function recordTestOutput(name: string, text: string): void {
  const dir = testLogDir();
  if (!dir || text.length === 0) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${name}-${process.pid}.log`), text);
}
