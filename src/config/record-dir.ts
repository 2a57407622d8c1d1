import { constants } from "node:fs";
import { access, stat, statfs } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/**
 * The kernel's file systems, by their statfs magic number: none holds files of ours, and under /proc
 * Node's recursive mkdir never even returns.
 */
const KERNEL_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
]);

/**
 * Why `record.dir` cannot hold a recording, or undefined. Nothing is created: the directory, or the
 * nearest of its parents that exists (where it will be made), must be a directory on a real file
 * system that this process may write in.
 */
export async function recordDirProblem(dir: string): Promise<string | undefined> {
  const found = await nearestExisting(resolve(dir));
  if ("problem" in found) return found.problem;
  const { path, isDirectory } = found;
  if (!isDirectory) return `record.dir: ${path} is not a directory`;
  const kernel = KERNEL_FILE_SYSTEMS.get(Number((await statfs(path)).type));
  if (kernel)
    return `record.dir: ${dir} is on the kernel's ${kernel} file system, which holds no files; expected a directory on a disk`;
  try {
    await access(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `record.dir: cannot create files in ${path} (${codeOf(error)}); expected a directory Keeper's user may write in`;
  }
  return undefined;
}

/** The path itself or its nearest parent that exists, walking up from a missing one. */
async function nearestExisting(
  path: string,
): Promise<{ path: string; isDirectory: boolean } | { problem: string }> {
  try {
    return { path, isDirectory: (await stat(path)).isDirectory() };
  } catch (error) {
    const code = codeOf(error);
    // ENOTDIR: a file stands where a parent should be; the walk up finds and names it.
    if ((code === "ENOENT" || code === "ENOTDIR") && dirname(path) !== path)
      return nearestExisting(dirname(path));
    return { problem: `record.dir: cannot look at ${path} (${code})` };
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? "error";
}
