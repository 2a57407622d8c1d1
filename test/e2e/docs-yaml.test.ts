/**
 * Docs are tests: every YAML config the docs show is checked and run here.
 *
 * What is extracted: every ```yaml block of README.md, strategies/README.md and docs/*.md, and every example
 * config file (config/*.yaml, strategies/examples/*.yaml). Each is one test:
 *
 * - A block meant to be refused says so in a comment line `# invalid: <message>`: `keeper config
 *   check` must exit 2 and print that message. Nothing else is done with it.
 * - Every other block must pass `keeper config check` (exit 0), then a keeper loaded from it runs one
 *   poll of every wallet against the sandbox with no error logged and no job failed. The keeper runs
 *   the scheduler and worker roles, not the signer: intents are recorded and built but never signed,
 *   so what one block asks for never changes what the next block sees.
 *
 * How a doc block becomes a config that runs here (the same for fragments and whole files):
 *
 * 1. DOC_VALUES below: values the docs use as examples are replaced by the sandbox's in the block's
 *    text: the README's example wallet and key file by sandbox wallet 0 and a keypair file of it,
 *    a `module: ./...` path (relative to a config file at the checkout's root, as the docs
 *    assume) by the same path under the checkout, and the recording directory of docs/replay.md by
 *    one of the test's own. Mints are used as written: the sandbox's USDC,
 *    USDT and wrapped SOL live at their mainnet addresses, as the docs give them.
 * 2. A block with no wallets (a fragment such as `protections:`, or `wallets: []`) gets the
 *    sandbox's wallets.
 * 3. Where the service, chain, Redis and ops server are comes from KEEPER_* variables, which
 *    override any file, as an operator would set them (KEEPER_SERVICE_URL, KEEPER_API_KEY_FILE,
 *    KEEPER_RPC_URL, KEEPER_REDIS_URL, KEEPER_REDIS_PREFIX, KEEPER_OPS_PORT=0).
 *
 * Everything else in the block is used as written.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { loadConfig } from "../../src/config/load-config.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  runCli,
  startTestKeeper,
  startTestSandbox,
  writeWalletKeyFiles,
} from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

const ROOT = process.cwd();
const README_WALLET = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const README_KEY_FILE = "/keys/wallet.json";
/** docs/replay.md's `record.dir`. */
const DOC_RECORD_DIR = "/var/lib/keeper/recording";

interface DocBlock {
  /** Where it is: `file:line` of its first line. */
  readonly where: string;
  readonly text: string;
  /** The message a block marked `# invalid: <message>` must be refused with. */
  readonly invalid?: string;
}

function block(where: string, text: string): DocBlock {
  const invalid = /^\s*#\s*invalid:\s*(.+?)\s*$/m.exec(text)?.[1];
  return invalid === undefined ? { where, text } : { where, text, invalid };
}

function yamlBlocksOf(file: string): DocBlock[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) =>
    block(`${file}:${text.slice(0, m.index).split("\n").length}`, m[1] ?? ""),
  );
}

function yamlFilesIn(dir: string): DocBlock[] {
  return readdirSync(join(ROOT, dir))
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => block(`${dir}/${name}`, readFileSync(join(ROOT, dir, name), "utf8")));
}

const BLOCKS: readonly DocBlock[] = [
  ...yamlBlocksOf("README.md"),
  ...yamlBlocksOf("strategies/README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .flatMap((name) => yamlBlocksOf(`docs/${name}`)),
  ...yamlFilesIn("config"),
  ...yamlFilesIn("strategies/examples"),
];

describe("docs are tests: every YAML config in the docs is checked and runs one poll", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let dir: string;
  let apiKeyFile: string;
  let wallet0KeyFile: string;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-docs-yaml");
    dir = await mkdtemp(join(tmpdir(), "keeper-docs-yaml-"));
    apiKeyFile = join(dir, "api-key");
    await writeFile(apiKeyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
    const walletsYaml = parseYaml(await writeWalletKeyFiles(sandbox)) as {
      wallets: Array<{ keyFile: string }>;
    };
    wallet0KeyFile = walletsYaml.wallets[0]?.keyFile ?? "";
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  /** The block as a config file that runs here (see the top of this file), and its environment. */
  async function configFileOf(docBlock: DocBlock, index: number) {
    const DOC_VALUES: ReadonlyArray<[string | RegExp, string]> = [
      [README_WALLET, sandbox.wallets[0] ?? ""],
      [README_KEY_FILE, wallet0KeyFile],
      [/^(\s*module:\s*)\.\//gm, `$1${ROOT}/`],
      // A recording goes to the test's own directory, not the machine's.
      [DOC_RECORD_DIR, join(dir, `recording-${index}`)],
    ];
    let text = docBlock.text;
    for (const [doc, value] of DOC_VALUES)
      text = typeof doc === "string" ? text.replaceAll(doc, value) : text.replace(doc, value);
    const config = (parseYaml(text) ?? {}) as Record<string, unknown>;
    if (!Array.isArray(config.wallets) || config.wallets.length === 0)
      config.wallets = sandbox.wallets.map((pubkey) => ({ pubkey }));
    const file = join(dir, `block-${index}.yaml`);
    await writeFile(file, stringifyYaml(config));
    const env: Record<string, string> = {
      KEEPER_CONFIG: "",
      KEEPER_SERVICE_URL: sandbox.url,
      KEEPER_API_KEY_FILE: apiKeyFile,
      KEEPER_RPC_URL: sandbox.chain?.url ?? "",
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: `${redis.prefix}-${index}`,
      KEEPER_OPS_PORT: "0",
    };
    return { file, env };
  }

  it("finds the docs' YAML", () => {
    const sources = new Set(BLOCKS.map((b) => b.where.split(":")[0]));
    expect([...sources]).toEqual(expect.arrayContaining(["README.md", "strategies/README.md"]));
    expect(BLOCKS.map((b) => b.where)).toContain("config/default.yaml");
  });

  it.each(BLOCKS.map((b, i) => [b.where, b, i] as const))(
    "%s",
    async (_where, docBlock, index) => {
      const { file, env } = await configFileOf(docBlock, index);
      const check = await runCli(["config", "check", "--config", file], env);
      if (docBlock.invalid !== undefined) {
        expect(check.stderr).toContain(docBlock.invalid);
        expect(check.code).toBe(2);
        return;
      }
      expect(check.stderr).toBe("");
      expect(check.stdout).toContain("valid: mode live");
      expect(check.code).toBe(0);

      const config = await loadConfig({ file, env });
      const { keeper, logs } = await startTestKeeper(config, sandbox, ["scheduler", "worker"]);
      try {
        const wallets = config.wallets.length > 0 ? config.wallets.map((w) => w.pubkey) : sandbox.wallets;
        const tick = new Date();
        await keeper.scheduler?.tick("pollOrders", tick);
        await eventually("one poll of every wallet", async () => {
          const polled = await keeper.redis.zmscore(keeper.keys.lastPolls, ...wallets);
          return polled.every((at) => Number(at) >= Math.floor(tick.getTime() / 1000)) ? true : undefined;
        });
        // The intents the poll recorded are built; a build that fails shows as a failed job.
        await eventually("the poll's builds ran", async () => {
          const counts = await keeper.queues.actions.getJobCounts("waiting", "active");
          return (counts.waiting ?? 0) + (counts.active ?? 0) === 0 ? true : undefined;
        });
      } finally {
        await keeper.stop();
      }
      const errors = logs
        .records()
        .filter((r) => Number(r.level) >= 50 || r.msg === "job failed")
        .map((r) => `${String(r.msg)}: ${String(r.err ?? "")}`);
      expect(errors).toEqual([]);
    },
    90_000,
  );
});
