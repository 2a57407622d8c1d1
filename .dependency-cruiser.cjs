/**
 * Keeper's layering, checked by `npm run depcheck` (part of `npm test`). Arrows run one way (see
 * docs/architecture.md): core at the bottom; api and chain on core; ops (infrastructure) on core and
 * api; config on those; signer and keeper above them; the status page above keeper; app wires them;
 * the CLI is the top. Type-only imports count: an arrow is an arrow.
 */
const layer = (name, may, comment) => ({
  name: `${name}-layer`,
  comment,
  severity: "error",
  from: { path: `^src/${name}/` },
  to: { path: "^(src|strategies|bench|test)/", pathNot: [`^src/${name}/`, ...may.map((m) => `^${m}/`)] },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No cycle among files: a cycle makes two modules one, and their load order a guess.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular-folders",
      comment: "No cycle among folders either: a folder's files depend on the folders below it only.",
      severity: "error",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-imports-core-and-zod",
      comment: "src/core is pure types and helpers: it imports only src/core and zod.",
      severity: "error",
      from: { path: "^src/core/" },
      to: { pathNot: ["^src/core/", "(^|/)node_modules/zod/"] },
    },
    {
      name: "strategies-import-core-and-zod",
      comment: "Strategies are pure: they import only src/core, zod and each other.",
      severity: "error",
      from: { path: "^strategies/" },
      to: { pathNot: ["^src/core/", "^strategies/", "(^|/)node_modules/zod/"] },
    },
    {
      name: "ops-never-imports-the-application",
      comment: "src/ops is infrastructure: the application passes its routes and data in (plugins).",
      severity: "error",
      from: { path: "^src/ops/" },
      to: { path: "^src/(app|keeper|status|signer|chain|config|cli|sandbox)/" },
    },
    {
      name: "src-never-imports-tests-or-bench",
      severity: "error",
      from: { path: "^(src|strategies)/" },
      to: { path: "^(test|bench)/" },
    },
    layer("api", ["src/core"], "The service client stands on core only."),
    layer("chain", ["src/core"], "The chain edge and the policy's rules stand on core only."),
    layer("ops", ["src/core", "src/api"], "Infrastructure: metrics, logs, the ops server."),
    layer(
      "config",
      ["src/core", "src/api", "src/chain", "src/ops", "strategies"],
      "Config is read below every role.",
    ),
    layer(
      "signer",
      ["src/core", "src/api", "src/chain", "src/config", "src/ops"],
      "The signer trusts nothing above it: never the keeper's pipeline, the status page or the app.",
    ),
    layer(
      "keeper",
      ["src/core", "src/api", "src/chain", "src/config", "src/ops", "src/signer", "strategies"],
      "The engine never reaches up to the status page, the app or the CLI.",
    ),
    layer(
      "status",
      ["src/core", "src/api", "src/config", "src/ops", "src/keeper", "strategies"],
      "The status page is a feature over the keeper's state, mounted on the ops server.",
    ),
    layer(
      "app",
      ["src/core", "src/api", "src/chain", "src/config", "src/ops", "src/signer", "src/keeper", "src/status"],
      "The composition root wires everything below it and is wired only by the CLI.",
    ),
    layer(
      "sandbox",
      ["src/core", "src/api", "src/chain", "src/config", "src/ops"],
      "The service's imitation stands beside the keeper, not on it.",
    ),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are arrows too (core once imported the API's types).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
