import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readDockerignore } from "../helpers/dockerignore.js";
import { recordTestOutput } from "../helpers/test-secrets.js";

/**
 * No Docker engine runs on these machines, so the image's build stage is replayed here: every COPY and
 * RUN of the Dockerfile's `build` stage, in order, in a temporary copy (WORKDIR is that copy), with
 * this machine's npm and the registry. Then every path the runtime stage copies from it must exist and
 * the built CLI must run. A Dockerfile whose install or build step fails here fails the same way there.
 * COPY takes only what .dockerignore leaves in the build context, as `docker build` would.
 */
const ROOT = process.cwd();
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const excludedFromContext = readDockerignore(join(ROOT, ".dockerignore"));

interface Step {
  instruction: string;
  args: string;
}

/** The instructions of a stage, continuation lines joined, comments dropped. */
function stage(name: string): Step[] {
  const lines = dockerfile.replace(/\\\n\s*/g, " ").split("\n");
  const steps: Step[] = [];
  let inside = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [instruction = "", ...rest] = line.split(/\s+/);
    if (instruction === "FROM") {
      inside = new RegExp(`\\bAS\\s+${name}$`, "i").test(line);
      continue;
    }
    if (inside) steps.push({ instruction, args: rest.join(" ") });
  }
  return steps;
}

const workdir = mkdtempSync(join(tmpdir(), "keeper-image-"));
// The copy holds a whole node_modules: removing it can take minutes on a loaded disk.
afterAll(() => rm(workdir, { recursive: true, force: true }), 600_000);

describe("the Dockerfile's build stage, replayed in a temporary copy", () => {
  it("installs, builds and prunes, and leaves what the runtime stage copies", () => {
    const steps = stage("build");
    expect(steps.filter((s) => s.instruction === "RUN").length).toBeGreaterThanOrEqual(2);
    for (const step of steps) {
      if (step.instruction === "WORKDIR") continue;
      if (step.instruction === "COPY") {
        const parts = step.args.split(/\s+/).filter((p) => !p.startsWith("--"));
        const destination = parts.pop() ?? ".";
        for (const source of parts) {
          const target =
            destination.endsWith("/") || parts.length > 1
              ? join(workdir, destination, source)
              : join(workdir, destination);
          cpSync(join(ROOT, source), resolve(workdir, target), {
            recursive: true,
            filter: (path) => !excludedFromContext(relative(ROOT, path)),
          });
        }
        continue;
      }
      if (step.instruction === "RUN") {
        const run = spawnSync("sh", ["-c", step.args], {
          cwd: workdir,
          encoding: "utf8",
          env: { ...process.env, npm_config_loglevel: "error" },
          timeout: 600_000,
        });
        recordTestOutput("dockerfile-build", `${run.stdout}\n${run.stderr}`);
        if (run.status !== 0)
          throw new Error(`RUN ${step.args} exited ${run.status}:\n${run.stderr.slice(-2000)}`);
        continue;
      }
      throw new Error(`the build stage has an instruction this replay does not know: ${step.instruction}`);
    }

    const copied = stage("runtime")
      .filter((s) => s.instruction === "COPY" && s.args.includes("--from=build"))
      .map((s) => (s.args.split(/\s+/).filter((p) => !p.startsWith("--"))[0] ?? "").replace(/^\/app\//, ""));
    expect(copied).toContain("dist/src");
    for (const path of copied) expect(existsSync(join(workdir, path)), path).toBe(true);
    // Pruned: no dev dependency is left for the image.
    expect(existsSync(join(workdir, "node_modules", "vitest"))).toBe(false);

    const cli = spawnSync(process.execPath, [join(workdir, "dist", "src", "cli.js"), "config", "check"], {
      cwd: workdir,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(cli.stdout + cli.stderr).toContain("valid: mode live");
    expect(cli.status).toBe(0);
  }, 900_000);
});
