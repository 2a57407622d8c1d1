import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: [
      "test/setup/global-log-dir.ts",
      "test/setup/global-redis.ts",
      "test/setup/global-openapi-tally.ts",
    ],
    // Integration tests share one Redis (each uses its own key prefix); the machine has 2 cores.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: "suite",
          include: [
            "test/unit/**/*.test.ts",
            "test/integration/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "strategies/**/*.test.ts",
          ],
          setupFiles: ["test/setup/tee-output.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Last: reads what every test above logged.
        test: { name: "log-scan", include: ["test/scan/**/*.test.ts"], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
