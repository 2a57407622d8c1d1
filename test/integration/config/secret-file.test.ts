import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSecretFile, secretFileProblem } from "../../../src/config/secret-file.js";
import { ConfigError } from "../../../src/core/errors.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keeper-secret-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function secret(name: string, mode: number): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, "the-secret\n", { mode });
  await chmod(path, mode);
  return path;
}

async function refusal(run: () => Promise<unknown>): Promise<readonly string[]> {
  const error = await run().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).not.toContain("the-secret");
  return (error as ConfigError).problems;
}

describe("secret files in live mode", () => {
  it("refuses a file owned by another user than the process's, naming the key, the path and the rule", async () => {
    const path = await secret("theirs", 0o600);
    const owner = (await stat(path)).uid;
    // The process as another user than the file's owner: the file could be replaced by its owner.
    const other = owner + 4242;
    expect(
      await refusal(() => readSecretFile(path, { key: "service.apiKeyFile", isGuarded: true, uid: other })),
    ).toEqual([
      `service.apiKeyFile: ${path} is owned by uid ${owner}, not by this process's user (uid ${other}); a secret file must belong to the user Keeper runs as: chown it to that user, then chmod 600 ${path}`,
    ]);
    // Its owner reads it.
    expect(await readSecretFile(path, { key: "service.apiKeyFile", isGuarded: true, uid: owner })).toBe(
      "the-secret\n",
    );
    // Dry-run does not check.
    expect(await readSecretFile(path, { key: "service.apiKeyFile", isGuarded: false, uid: other })).toBe(
      "the-secret\n",
    );
  });

  it("checks the file a link points to, and refuses a directory", async () => {
    const target = await secret("loose-target", 0o644);
    const link = join(dir, "link-to-loose");
    await symlink(target, link);
    expect(await refusal(() => readSecretFile(link, { key: "ops.adminTokenFile", isGuarded: true }))).toEqual(
      [
        `ops.adminTokenFile: ${link} is open to group or others (mode 0644); a secret file must be readable by its owner only: chmod 600 ${link}`,
      ],
    );
    const folder = join(dir, "a-folder");
    await mkdir(folder, { mode: 0o700 });
    expect(
      await refusal(() => readSecretFile(folder, { key: "ops.adminTokenFile", isGuarded: true })),
    ).toEqual([`ops.adminTokenFile: ${folder} is not a regular file`]);
  });
});

describe("secretFileProblem", () => {
  it.each([
    ["the owner's 0600 file", 0o100600, 1000, 1000, undefined],
    ["the owner's 0400 file", 0o100400, 1000, 1000, undefined],
    ["root's own file, read by root", 0o100600, 0, 0, undefined],
    [
      "another user's file, read by root",
      0o100600,
      1000,
      0,
      "owned by uid 1000, not by this process's user (uid 0)",
    ],
    ["a file group can read", 0o100640, 1000, 1000, "open to group or others (mode 0640)"],
    ["a file others can write", 0o100602, 1000, 1000, "open to group or others (mode 0602)"],
    ["no user id (Windows): the mode only", 0o100600, 1000, undefined, undefined],
  ])("%s", (_name, mode, uid, processUid, expected) => {
    const problem = secretFileProblem("k", "/p", { mode, uid }, processUid);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toContain(expected);
  });
});
