import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import { eventually, writeKeeperConfig } from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

/**
 * `keeper start` as a person runs it, in a terminal (a pseudo-terminal from util-linux's `script`),
 * and as a container or a pipe runs it: readable lines on the terminal, JSON lines anywhere else,
 * and `ops.logFormat` (here through KEEPER_LOG_FORMAT) over both.
 */
describe("log lines on a terminal and off it", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let config: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0 });
    redis = await testRedis("e2e-log-format");
    config = await writeKeeperConfig(sandbox, redis.prefix);
  });
  afterAll(async () => {
    // Each run is its own process group (the terminal's, or the keeper's): stop it whole.
    for (const child of children)
      if (child.pid !== undefined && child.exitCode === null)
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {
          // Gone already with its terminal.
        }
    await sandbox?.close();
    await redis?.cleanup();
  });

  /** Starts a worker-only keeper and returns what it wrote once it logged its start. */
  async function startedOutput(onTerminal: boolean, env: NodeJS.ProcessEnv = {}): Promise<string> {
    const keeper = `${process.execPath} ${join(process.cwd(), "bin/keeper.js")} start --role worker --config ${config}`;
    const child = onTerminal
      ? spawn("script", ["-qfec", keeper, "/dev/null"], { env: { ...process.env, ...env }, detached: true })
      : spawn("sh", ["-c", keeper], { env: { ...process.env, ...env }, detached: true });
    children.push(child);
    let output = "";
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    await eventually(
      "the keeper logged its start",
      async () => {
        if (child.exitCode !== null) throw new Error(`the keeper stopped (${child.exitCode}): ${output}`);
        return output.includes("keeper started") ? true : undefined;
      },
      60_000,
    );
    if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    return output;
  }

  const line = (output: string) => output.split(/\r?\n/).find((l) => l.includes("keeper started")) ?? "";

  it("a terminal gets readable lines: time, level, message, then the fields", async () => {
    const started = line(await startedOutput(true, { KEEPER_LOG_FORMAT: undefined }));
    expect(started).toMatch(/^\S*\[\d\d:\d\d:\d\d\.\d{3}\]\S* \S*INFO\S*.*keeper started/);
    expect(started).not.toContain('"level"');
  }, 90_000);

  it("anything else gets JSON lines", async () => {
    const started = JSON.parse(line(await startedOutput(false))) as Record<string, unknown>;
    expect(started).toMatchObject({ level: "info", msg: "keeper started", roles: ["worker"] });
  }, 90_000);

  it("ops.logFormat json keeps JSON on a terminal", async () => {
    const started = line(await startedOutput(true, { KEEPER_LOG_FORMAT: "json" }));
    expect(JSON.parse(started)).toMatchObject({ level: "info", msg: "keeper started" });
  }, 90_000);
});
