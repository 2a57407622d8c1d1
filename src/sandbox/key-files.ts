import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { SANDBOX_POOL_PROGRAM_ID } from "./chain/pool-program.js";
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

/** Writes a file readable by its owner alone, also when it existed with a looser mode. */
async function writePrivate(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}

/**
 * Writes each sandbox wallet's secret key to `dir/wallet-<i>.json` as a Solana CLI keypair file (a JSON
 * array of the 64 bytes, mode 0600, as `keyFile` reads it), the sandbox's API key to `dir/api-key`, and
 * `dir/keeper.yaml`, a config that points a keeper at this sandbox with those files. The directory is
 * created with mode 0700.
 */
export async function writeSandboxKeyFiles(
  sandbox: RunningSandbox,
  keysDir: string,
): Promise<SandboxKeyFiles> {
  const dir = resolve(keysDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // An existing directory is the operator's: its mode is reported, not changed.
  const dirMode = (await stat(dir)).mode & 0o777;
  const wallets: Array<{ pubkey: string; keyFile: string; label: string }> = [];
  for (const [i, pubkey] of sandbox.wallets.entries()) {
    const keyFile = join(dir, `wallet-${i}.json`);
    const secret = sandbox.world.walletKeypair(i).secretKey;
    await writePrivate(keyFile, JSON.stringify(Array.from(secret)));
    wallets.push({ pubkey, keyFile, label: `sandbox wallet ${i}` });
  }
  const apiKeyFile = join(dir, "api-key");
  await writePrivate(apiKeyFile, `${sandbox.apiKey}\n`);
  const config = {
    mode: "live",
    service: { baseUrl: sandbox.url, apiKeyFile },
    ...(sandbox.chain === undefined ? {} : { rpc: { url: sandbox.chain.url } }),
    // The sandbox pool's program pays a swap's output in the swap's own transaction; claims pay
    // mainnet USDC's mint, the default payout mint.
    signer: { allowedPrograms: [SANDBOX_POOL_PROGRAM_ID.toBase58()] },
    wallets,
    strategies: [{ name: "auto-claim" }],
  };
  const configYaml = stringify(config);
  const configFile = join(dir, "keeper.yaml");
  await writePrivate(configFile, configYaml);
  return { dir, configFile, configYaml, ...((dirMode & 0o077) !== 0 ? { looseDirMode: dirMode } : {}) };
}
