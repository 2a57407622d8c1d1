import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { recordTestOutput } from "../helpers/test-secrets.js";

/** What the Docker image runs: the built JavaScript on plain node (`npm test` builds it first). */
const BUILT_CLI = join(process.cwd(), "dist", "src", "cli.js");
const EXAMPLE_STRATEGY = join(process.cwd(), "strategies", "examples", "close-at-multiple.ts");
/** A wallet for the configs below: config check refuses a config file that names none. */
const WALLETS = "wallets:\n  - pubkey: 7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5\n";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function run(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; output: string }>;
} {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const done = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("exit", (code) => {
      recordTestOutput("built-cli", output);
      resolve({ code, output });
    }),
  );
  return { child, done };
}

describe("the built keeper (node dist/src/cli.js, as the image runs it)", () => {
  beforeAll(() => {
    if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: npm run build (npm test runs it)`);
  });

  it("finds its default config and checks a config", async () => {
    const { code, output } = await run(["config", "check"]).done;
    expect(output).toContain("valid: mode live, 0 wallet(s), strategies: auto-claim");
    expect(code).toBe(0);
  });

  it("loads a user strategy written in TypeScript (tsx is registered on demand)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keeper-built-"));
    const file = join(dir, "keeper.yaml");
    await writeFile(
      file,
      `${WALLETS}strategies:\n  - name: close-at-multiple\n    module: ${EXAMPLE_STRATEGY}\n    multiple: 1.5\n`,
    );
    const good = await run(["config", "check", "--config", file]).done;
    expect(good.output).toContain("strategies: close-at-multiple");
    expect(good.code).toBe(0);

    // Its config is validated by its own schema, loaded from the .ts file.
    await writeFile(
      file,
      `${WALLETS}strategies:\n  - name: close-at-multiple\n    module: ${EXAMPLE_STRATEGY}\n    multiple: -1\n`,
    );
    const bad = await run(["config", "check", "--config", file]).done;
    expect(bad.output).toMatch(/strategies\[0\]\.multiple: /);
    expect(bad.code).toBe(2);
  });

  it("runs the sandbox (loaded on demand) and stops on SIGTERM", async () => {
    const { child, done } = run(["sandbox", "--port", "0", "--chain-port", "0"]);
    let output = "";
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    await expect.poll(() => output, { timeout: 30_000 }).toMatch(/chain rpc +http:\/\/127\.0\.0\.1:\d+/);
    const url = /sandbox service +(http:\/\/\S+)/.exec(output)?.[1];
    const response = await fetch(`${url}/prediction/v1/leaderboards`, {
      headers: { "x-api-key": "sandbox-key" },
    });
    expect(response.status).toBe(200);
    child.kill("SIGTERM");
    const { code } = await done;
    expect(code).toBe(0);
  });
});
