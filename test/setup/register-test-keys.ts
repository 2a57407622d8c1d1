import { relative } from "node:path";
import { Keypair } from "@solana/web3.js";
import { expect } from "vitest";
import { recordTestSecret } from "../helpers/test-secrets.js";

/**
 * Every keypair a test process makes (random ones in tests, derived ones in the sandbox, the local
 * chain's vault and mints) goes on the run's key registry, so the secret scan looks for each one in
 * every form. Hooked once per Keypair class: test files of one worker share the module.
 */
const HOOKED = Symbol.for("keeper.test.keypairs-registered");
type KeypairFactories = Pick<typeof Keypair, "generate" | "fromSecretKey" | "fromSeed">;

function whereMade(): string {
  const testPath = expect.getState().testPath;
  return testPath ? relative(process.cwd(), testPath) : "outside a test file";
}

function register(made: Keypair, how: string): Keypair {
  recordTestSecret(made.secretKey, `keypair ${made.publicKey.toBase58()} (Keypair.${how} in ${whereMade()})`);
  return made;
}

const hooked = Keypair as typeof Keypair & { [HOOKED]?: true };
if (!hooked[HOOKED]) {
  hooked[HOOKED] = true;
  const original: KeypairFactories = {
    generate: Keypair.generate.bind(Keypair),
    fromSecretKey: Keypair.fromSecretKey.bind(Keypair),
    fromSeed: Keypair.fromSeed.bind(Keypair),
  };
  const factories = Keypair as KeypairFactories;
  factories.generate = () => register(original.generate(), "generate");
  factories.fromSecretKey = (secretKey, options) =>
    register(original.fromSecretKey(secretKey, options), "fromSecretKey");
  factories.fromSeed = (seed) => register(original.fromSeed(seed), "fromSeed");
}
