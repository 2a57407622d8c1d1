import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { KEEPER_NODE_FLAGS, missingNodeFlags } from "../../../src/cli/node-flags.js";

describe("the Node flags Keeper runs with", () => {
  it("are the same in the image's entrypoint, bin/keeper.js's first line and npm start", async () => {
    const dockerfile = await readFile("Dockerfile", "utf8");
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entrypoint ?? "[]")).toEqual(["node", ...KEEPER_NODE_FLAGS, "dist/src/cli.js"]);
    const shebang = (await readFile("bin/keeper.js", "utf8")).split("\n")[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${KEEPER_NODE_FLAGS.join(" ")}`);
    const pkg = JSON.parse(await readFile("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`node ${KEEPER_NODE_FLAGS.join(" ")} bin/keeper.js start`);
  });

  it("names the ones a process was started without, whether given on the command line or in NODE_OPTIONS", () => {
    expect(missingNodeFlags([], "")).toEqual([...KEEPER_NODE_FLAGS]);
    expect(missingNodeFlags([...KEEPER_NODE_FLAGS], "")).toEqual([]);
    expect(missingNodeFlags(["--inspect"], KEEPER_NODE_FLAGS.join(" "))).toEqual([]);
    // Another value is the operator's choice: it counts as given.
    expect(
      missingNodeFlags(["--max-semi-space-size=16", "--no-flush-bytecode"], "--heap-growing-percent=80"),
    ).toEqual([]);
    expect(missingNodeFlags(["--max-semi-space-size=16"], "--no-flush-bytecode")).toEqual([
      "--heap-growing-percent=50",
    ]);
  });
});
