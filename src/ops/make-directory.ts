import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * `mkdir -p` that always returns. Node's own (`recursive: true`) never does where the kernel answers
 * ENOENT for a new directory whose parent exists (under /proc): it makes the parent again, finds it
 * there, and tries the child forever. Here each missing level is made once, parents first, and the
 * child's error after that is thrown.
 */
export async function makeDirectory(dir: string, mode: number): Promise<void> {
  try {
    await mkdir(dir, { mode });
    return;
  } catch (error) {
    if (isCode(error, "EEXIST")) return await refuseNonDirectory(dir, error);
    if (!isCode(error, "ENOENT") || dirname(dir) === dir) throw error;
  }
  await makeDirectory(dirname(dir), mode);
  try {
    await mkdir(dir, { mode });
  } catch (error) {
    if (!isCode(error, "EEXIST")) throw error;
    await refuseNonDirectory(dir, error);
  }
}

/** A file in the directory's place is an error, as with Node's own. */
async function refuseNonDirectory(dir: string, error: unknown): Promise<void> {
  if (!(await stat(dir)).isDirectory()) throw error;
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}
