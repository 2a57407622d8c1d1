import { appendFileSync } from "node:fs";
import type { ResponseCheck } from "../../src/sandbox/http/response-check.js";
import { type RunningSandbox, type StartSandboxOptions, startSandbox } from "../../src/sandbox/index.js";

/** The run's tally of checked responses, one JSON line per sandbox (test/setup/global-openapi-tally.ts). */
export function tallyCheckedResponses(check: ResponseCheck): void {
  const file = process.env.KEEPER_TEST_OPENAPI_TALLY;
  if (file === undefined) return;
  const line = {
    validated: check.validated,
    violations: check.violationCount,
    operations: [...check.byOperation.keys()],
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/**
 * The sandbox as every test starts it: each response is checked against `/openapi.json`, and `close()`
 * throws listing those that did not match, which fails the test file that owns the sandbox.
 */
export async function startCheckedSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await startSandbox({ ...options, checkResponses: true });
  const check = sandbox.responseCheck;
  return {
    ...sandbox,
    async close() {
      try {
        await sandbox.close();
      } finally {
        if (check !== undefined) tallyCheckedResponses(check);
      }
    },
  };
}
