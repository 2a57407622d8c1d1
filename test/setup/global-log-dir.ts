import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One directory per run where every test process writes what it printed and logged; the last test
 * project (test/scan) reads it all and looks for secrets.
 */
export default function setup(): void {
  process.env.KEEPER_TEST_LOG_DIR ??= mkdtempSync(join(tmpdir(), "keeper-test-logs-"));
}
