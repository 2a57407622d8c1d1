import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endpoints } from "../../src/api/endpoints.js";

interface SandboxTally {
  validated: number;
  violations: number;
  /** `name 200` or `name error` for each kind of response the sandbox checked. */
  operations: string[];
}

/**
 * Every sandbox a test starts checks its responses against /openapi.json and adds a line to one file;
 * the run ends by printing the total and the endpoints whose success bodies no test checked, so a run
 * shows how much of the service the check covered.
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
    rmSync(dir, { recursive: true, force: true });
    if (lines.length === 0) return;
    const tallies = lines.map((line) => JSON.parse(line) as SandboxTally);
    const validated = tallies.reduce((n, t) => n + t.validated, 0);
    const violations = tallies.reduce((n, t) => n + t.violations, 0);
    const seen = new Set(tallies.flatMap((t) => t.operations));
    const unchecked = Object.keys(endpoints).filter((name) => !seen.has(`${name} 200`));
    process.stdout.write(
      `openapi: ${validated} sandbox responses checked against /openapi.json (${tallies.length} sandboxes), ` +
        `${violations} violations; success bodies of ${Object.keys(endpoints).length - unchecked.length}/` +
        `${Object.keys(endpoints).length} endpoints checked${unchecked.length ? ` (not: ${unchecked.join(", ")})` : ""}\n`,
    );
  };
}
