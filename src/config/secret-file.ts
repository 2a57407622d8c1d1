import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { ConfigError } from "../core/errors.js";

export interface SecretFileOptions {
  /** The config key or variable that named the file, for messages (`service.apiKeyFile`). */
  key: string;
  /** Refuse a file others may read or that another user owns (live mode). */
  isGuarded: boolean;
  /** The process's user id; Node's own when omitted (none on Windows: no owner check there). */
  uid?: number;
}

/**
 * Why a live keeper may not use a secret file with this mode and owner, or undefined. A file group or
 * others can reach may have been copied already; one owned by another user can be replaced by them.
 * Root reading a file of its own is fine; root reading another user's file is not.
 */
export function secretFileProblem(
  key: string,
  path: string,
  file: { mode: number; uid: number },
  processUid: number | undefined,
): string | undefined {
  const mode = (file.mode & 0o777).toString(8).padStart(4, "0");
  if ((file.mode & 0o077) !== 0)
    return `${key}: ${path} is open to group or others (mode ${mode}); a secret file must be readable by its owner only: chmod 600 ${path}`;
  if (processUid !== undefined && file.uid !== processUid)
    return `${key}: ${path} is owned by uid ${file.uid}, not by this process's user (uid ${processUid}); a secret file must belong to the user Keeper runs as: chown it to that user, then chmod 600 ${path}`;
  return undefined;
}

/**
 * Reads a secret file (an API key, a token, a wallet key). The checks run on the opened file itself,
 * so the file checked is the file read, and before a byte of it is read. Errors of the file system
 * (ENOENT, EACCES) are thrown as they are, for the caller to word; a refusal is a ConfigError.
 */
export async function readSecretFile(path: string, options: SecretFileOptions): Promise<string> {
  // Non-blocking: a FIFO planted in the file's place fails the regular-file check instead of hanging.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ConfigError([`${options.key}: ${path} is not a regular file`]);
    if (options.isGuarded) {
      const problem = secretFileProblem(options.key, path, info, options.uid ?? process.getuid?.());
      if (problem) throw new ConfigError([problem]);
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
