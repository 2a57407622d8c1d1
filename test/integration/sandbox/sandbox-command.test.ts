import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/core/errors.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { runSandboxCommand } from "../../../src/sandbox/main.js";

describe("keeper sandbox", () => {
  it("prints the URL, the key and the wallets, serves until SIGTERM, then closes", async () => {
    const lines: string[] = [];
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const running = runSandboxCommand(
      { port: 0, apiKey: "cli-key", seed: 7 },
      { print: (line) => lines.push(line), signals, onStarted: (s) => (started = s) },
    );
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const sandbox = started as RunningSandbox;
    expect(lines[0]).toBe(`sandbox service  ${sandbox.url}`);
    expect(lines).toContain("api key          cli-key");
    for (const wallet of sandbox.wallets) expect(lines).toContain(`  ${wallet}`);
    const response = await fetch(`${sandbox.url}/prediction/v1/leaderboards`, {
      headers: { "x-api-key": "cli-key" },
    });
    expect(response.status).toBe(200);

    signals.emit("SIGTERM", "SIGTERM");
    await running;
    expect(lines.at(-1)).toBe("SIGTERM: stopping the sandbox");
    await expect(fetch(`${sandbox.url}/prediction/v1/leaderboards`)).rejects.toThrow();
  });

  it("refuses a port that is taken with a configuration error naming --port", async () => {
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const first = runSandboxCommand(
      { port: 0 },
      { print: () => {}, signals, onStarted: (s) => (started = s) },
    );
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const port = Number(new URL((started as RunningSandbox).url).port);
    await expect(runSandboxCommand({ port }, { print: () => {}, signals })).rejects.toThrow(ConfigError);
    await expect(runSandboxCommand({ port }, { print: () => {}, signals })).rejects.toThrow(/--port/);
    signals.emit("SIGINT", "SIGINT");
    await first;
  });
});
