import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Every sandbox a test starts checks its responses against /openapi.json and adds its count to one
 * file; the run ends by printing the total, so a run shows how much of the suite the check covered.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "keeper-openapi-tally-"));
  const file = join(dir, "tally.jsonl");
  process.env.KEEPER_TEST_OPENAPI_TALLY = file;
  return () => {
    let lines: string[] = [];
    try {
      lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    } catch {
      // No sandbox was started in this run.
    }
    const counts = lines.map((line) => JSON.parse(line) as { validated: number; violations: number });
    const validated = counts.reduce((n, c) => n + c.validated, 0);
    const violations = counts.reduce((n, c) => n + c.violations, 0);
    process.stdout.write(
      `openapi: ${validated} sandbox responses checked against /openapi.json by ${counts.length} sandboxes, ${violations} violations\n`,
    );
    rmSync(dir, { recursive: true, force: true });
  };
}
