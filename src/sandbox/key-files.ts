import { constants } from "node:fs";
import { lstat, open, realpath, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { ConfigError } from "../core/errors.js";
import { makeDirectory } from "../ops/make-directory.js";
import { SANDBOX_POOL_PROGRAM_ID } from "./chain/pool-program.js";
import { fleetSchedules } from "./fleet-config.js";
import { DEFAULT_WINDOW_SECONDS } from "./http/rate-limit.js";
import type { RunningSandbox } from "./index.js";

export interface SandboxKeyFiles {
  readonly dir: string;
  /** `keeper.yaml` in the directory: a config for a keeper on this sandbox. */
  readonly configFile: string;
  /** The config's text (it names key files, never holds a key). */
  readonly configYaml: string;
  /** The directory's mode when it existed already and others may enter it (left as it was). */
  readonly looseDirMode?: number;
}

/** Key files written at once. */
const WRITE_BATCH = 64;

const refused = (problem: string) => new ConfigError([`--keys-dir: ${problem}`]);

/**
 * The directory keys are written into must be the user's alone to change: anyone else who can write
 * there can plant a link named like a key file, and the key would be written through it wherever it
 * points. Reading or entering it is only reported (`looseDirMode`).
 */
async function checkKeysDir(dir: string): Promise<void> {
  const info = await stat(dir);
  if (!info.isDirectory()) throw refused(`${dir} is not a directory`);
  const mode = (info.mode & 0o777).toString(8).padStart(4, "0");
  if ((info.mode & 0o022) !== 0)
    throw refused(
      `${dir} can be written by group or others (mode ${mode}): a key file could be written through a link planted there; use a directory only you can write to (chmod 700 ${dir})`,
    );
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid)
    throw refused(
      `${dir} is owned by uid ${info.uid}, not by this process's user (uid ${uid}): use a directory of your own`,
    );
}

/** Whether a regular file is at `file`; anything else there (a link, a directory) is refused. */
async function existingFile(file: string): Promise<boolean> {
  const existing = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (existing && !existing.isFile())
    throw refused(
      `${file} is ${existing.isSymbolicLink() ? "a symbolic link" : "not a regular file"}: key files are written only as new files of their own; remove it and run again`,
    );
  return existing !== undefined;
}

/** Runs `task` on every item, `WRITE_BATCH` at once: 10,000 files one after another wait for seconds. */
async function inBatches<T>(items: readonly T[], task: (item: T, index: number) => Promise<unknown>) {
  for (let start = 0; start < items.length; start += WRITE_BATCH)
    await Promise.all(items.slice(start, start + WRITE_BATCH).map((item, k) => task(item, start + k)));
}

/**
 * Writes a file readable by its owner alone, as a new file: created exclusively (O_EXCL) and never
 * through a link (O_NOFOLLOW). A regular file left by an earlier run is replaced; a link or anything
 * else in its place is refused, and whatever it points at stays untouched.
 */
async function writePrivate(file: string, text: string): Promise<void> {
  if (await existingFile(file)) await unlink(file);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(file, flags, 0o600).catch((error: NodeJS.ErrnoException) => {
    // Something appeared between the look and the write: the same refusal, never a write through it.
    if (error.code === "EEXIST" || error.code === "ELOOP")
      throw refused(`${file} appeared while it was being written: remove it and run again`);
    throw error;
  });
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/**
 * Writes each sandbox wallet's secret key to `dir/wallet-<i>.json` as a Solana CLI keypair file (a JSON
 * array of the 64 bytes, mode 0600, as `keyFile` reads it), the sandbox's API key to `dir/api-key`, and
 * `dir/keeper.yaml`, a config that points a keeper at this sandbox with those files. The directory is
 * created with mode 0700; one that group or others can write to, or another user owns, is refused.
 */
export async function writeSandboxKeyFiles(
  sandbox: RunningSandbox,
  keysDir: string,
): Promise<SandboxKeyFiles> {
  // Not Node's recursive mkdir: under /proc it never returns (makeDirectory).
  await makeDirectory(resolve(keysDir), 0o700).catch((error: NodeJS.ErrnoException) => {
    throw refused(`cannot create ${resolve(keysDir)} (${error.code ?? error.message})`);
  });
  // The directory itself, links resolved, is what is checked and written into.
  const dir = await realpath(resolve(keysDir));
  await checkKeysDir(dir);
  // An existing directory is the operator's: its mode is reported, not changed.
  const dirMode = (await stat(dir)).mode & 0o777;
  const wallets = sandbox.wallets.map((pubkey, i) => ({
    pubkey,
    keyFile: join(dir, `wallet-${i}.json`),
    label: `sandbox wallet ${i}`,
  }));
  const apiKeyFile = join(dir, "api-key");
  const configFile = join(dir, "keeper.yaml");
  // Every name is looked at before any key is written: a link planted at one stops them all.
  await inBatches([...wallets.map((w) => w.keyFile), apiKeyFile, configFile], existingFile);
  await inBatches(wallets, ({ keyFile }, i) =>
    writePrivate(keyFile, JSON.stringify(Array.from(sandbox.world.walletKeypair(i).secretKey))),
  );
  await writePrivate(apiKeyFile, `${sandbox.apiKey}\n`);
  // The sandbox's plan, and sweeps that fit in it at this many wallets (docs/fleet-model.md).
  const plan = sandbox.rateLimit === false ? undefined : sandbox.rateLimit;
  const { pollPositions, pollOrders } = fleetSchedules(wallets.length, plan?.requestsPerSecond ?? 1_000);
  const config = {
    mode: "live",
    service: {
      baseUrl: sandbox.url,
      apiKeyFile,
      ...(plan === undefined
        ? {}
        : {
            requestsPerSecond: plan.requestsPerSecond,
            rateLimitWindowSeconds: plan.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
          }),
    },
    ...(sandbox.chain === undefined ? {} : { rpc: { url: sandbox.chain.url } }),
    // The sandbox pool's program pays a swap's output in the swap's own transaction; claims pay
    // mainnet USDC's mint, the default payout mint.
    // Forecast swaps are co-signed by the sandbox's vault at its execute endpoint.
    signer: {
      allowedPrograms: [SANDBOX_POOL_PROGRAM_ID.toBase58()],
      ...(sandbox.chain === undefined
        ? {}
        : { serviceSigners: [sandbox.chain.assets.vault.publicKey.toBase58()] }),
    },
    wallets,
    schedules: { pollPositions, pollOrders },
    strategies: [{ name: "auto-claim" }],
  };
  const configYaml = stringify(config);
  await writePrivate(configFile, configYaml);
  return { dir, configFile, configYaml, ...((dirMode & 0o077) !== 0 ? { looseDirMode: dirMode } : {}) };
}
