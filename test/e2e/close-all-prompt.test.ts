import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ledger } from "../../src/keeper/state/ledger.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../helpers/ledger-queues.js";
import { recordTestOutput } from "../helpers/test-secrets.js";

const OWNER = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";

/**
 * `keeper close-all` asks on a terminal. util-linux `script` gives the command a pseudo-terminal and
 * passes what is written to its stdin on as what a person types.
 */
function closeAllOnTerminal(
  configFile: string,
  typed: string,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, join(process.cwd(), "bin/keeper.js"), "close-all", "--owner", OWNER]
    .concat(["--config", configFile])
    .join(" ");
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] });
    // A prompt that never comes must not leave the process behind the test.
    setTimeout(() => child.kill("SIGKILL"), 20_000).unref();
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
      // Answer once the question is on the screen, as a person would.
      if (output.includes('Type "close all" to confirm') && !child.stdin.writableEnded)
        child.stdin.end(typed);
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("exit", (code) => {
      recordTestOutput("close-all-prompt", output);
      resolve({ code, output });
    });
  });
}

describe("keeper close-all asks for confirmation on a terminal", () => {
  let redis: LedgerAndQueues;
  let configFile: string;
  let ledger: Ledger;
  beforeAll(async () => {
    redis = await ledgerAndQueues("e2e-close-all-prompt");
    configFile = join(await mkdtemp(join(tmpdir(), "keeper-close-all-")), "keeper.yaml");
    await writeFile(configFile, `wallets:\n  - pubkey: ${OWNER}\nredis:\n  prefix: ${redis.prefix}\n`);
    ({ ledger } = redis);
  });
  afterAll(async () => {
    await redis?.cleanup();
  });

  it("any answer but 'close all' does nothing (exit 1)", async () => {
    const { code, output } = await closeAllOnTerminal(configFile, "yes\n");
    expect(output).toContain(`Close EVERY open position of ${OWNER} (live)?`);
    expect(output).toContain("not confirmed: nothing was done");
    expect(code).toBe(1);
    expect(await ledger.list()).toEqual([]);
  });

  it("'close all' records one close-all of the wallet for the keeper to carry out", async () => {
    const { code, output } = await closeAllOnTerminal(configFile, "close all\n");
    expect(output).toMatch(/recorded close-all-\w+-cli\d+: a running keeper closes each open position/);
    expect(code).toBe(0);
    const rows = await ledger.list();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: "closeAll",
      wallet: OWNER,
      strategy: "operator",
      status: "pending",
    });
  });
});
