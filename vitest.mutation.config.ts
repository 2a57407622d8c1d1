import { defineConfig } from "vitest/config";

/**
 * The tests Stryker runs against each mutant of src/chain and src/signer (`npm run mutation`): the
 * unit tests and the integration tests of the chain and the signer, which run in-process on a local
 * chain and real Redis. The end-to-end tests start whole keepers and take minutes; they are left out.
 * MUTATION_TESTS=unit keeps to the unit tests: a quick loop while writing tests (about ten times
 * faster; the score it gives is a lower bound).
 */
const unitOnly = process.env.MUTATION_TESTS === "unit";
export default defineConfig({
  test: {
    globalSetup: [
      "test/setup/global-log-dir.ts",
      "test/setup/global-redis.ts",
      "test/setup/global-openapi-tally.ts",
    ],
    include: unitOnly
      ? ["test/unit/**/*.test.ts"]
      : [
          "test/unit/**/*.test.ts",
          "test/integration/chain/**/*.test.ts",
          "test/integration/signer/**/*.test.ts",
          // The signer's limits, through the signer role (src/app) and real Redis.
          "test/integration/app/signer-limits.test.ts",
        ],
    setupFiles: ["test/setup/tee-output.ts"],
    // A mutant that makes a wait endless is a timeout for Stryker, not a hung run.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
