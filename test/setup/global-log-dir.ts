import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One directory per run where every test process writes what it printed and logged; the last test
 * project (test/scan) reads it all and looks for secrets. The test keys it looks for are registered
 * in a file of their own, in a separate directory (mode 0700) that the scan never reads as a log and
 * that is deleted when the run ends.
 */
export default function setup(): () => void {
  process.env.KEEPER_TEST_LOG_DIR ??= mkdtempSync(join(tmpdir(), "keeper-test-logs-"));
  let registryDir: string | undefined;
  if (!process.env.KEEPER_TEST_SECRETS_FILE) {
    registryDir = mkdtempSync(join(tmpdir(), "keeper-test-secrets-"));
    process.env.KEEPER_TEST_SECRETS_FILE = join(registryDir, "secrets.jsonl");
  }
  return () => {
    if (registryDir) rmSync(registryDir, { recursive: true, force: true });
  };
}
