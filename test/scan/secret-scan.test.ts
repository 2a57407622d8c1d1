import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { secretForms } from "../../src/ops/secret-forms.js";
import { createWorld } from "../../src/sandbox/world/world.js";
import { TEST_API_KEY, testLogDir } from "../helpers/test-secrets.js";

/**
 * Runs after every other test (its project's groupOrder is last): everything the suite printed or
 * logged, in-process and in spawned keepers, must hold no form of a test wallet's secret key and not
 * the API key.
 */
describe("secret scan of everything the suite logged", () => {
  const dir = testLogDir();
  const files = dir ? readdirSync(dir).map((f) => join(dir, f)) : [];

  it("has logs to scan", () => {
    expect(dir).toBeDefined();
    expect(files.length).toBeGreaterThan(0);
    const total = files.reduce((n, f) => n + readFileSync(f).length, 0);
    // The e2e tests log at debug level: a few kilobytes at least, or the tee is broken.
    expect(total).toBeGreaterThan(10_000);
  });

  const world = createWorld({ seed: 1 });
  const secrets: Array<[string, string]> = [["the API key", TEST_API_KEY]];
  for (let i = 0; i < world.walletCount; i += 1)
    for (const form of secretForms(world.walletKeypair(i).secretKey))
      secrets.push([`sandbox wallet ${i}`, form]);

  it.each(secrets)("finds no trace of %s (%#)", (_label, secret) => {
    const leaks = files.filter((file) => readFileSync(file, "utf8").includes(secret));
    expect(leaks).toEqual([]);
  });
});
