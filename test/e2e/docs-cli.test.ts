/**
 * Docs are tests: every `keeper` command line README.md, strategies/README.md and docs/*.md show runs here, as
 * the docs write it, and exits as documented: 0, a command that runs until stopped (`start`,
 * `sandbox`) exits 0 on SIGTERM, and the exceptions the docs state are in DOCUMENTED_OUTCOMES.
 *
 * What is extracted, in the order of the docs:
 * - each code span of the first column of a table headed `| Command` (`status [--json]`, `pause [--reason TEXT]`);
 * - each code span elsewhere that starts with `npx keeper`, `keeper` or `npm run keeper --`
 *   (`npx keeper config check --config FILE`). Spans that hold `<command>` are the general form, and
 *   are not run themselves; nor is a span that only names a command shown elsewhere with more
 *   (`keeper close-all` beside `keeper close-all --owner <pubkey>`).
 *
 * How a synopsis becomes command lines: once with no optional `[...]` part, then with every optional
 * part, once per alternative of `a|b`; placeholders (`FILE`, `<owner>`, ...) take the `values` set in
 * beforeAll below, and a placeholder with no value there fails its test (add one).
 *
 * Where things are: every run gets the KEEPER_* variables of the test sandbox, Redis prefix and ops
 * port, and no KEEPER_CONFIG, so a form without `--config` runs "with no config file" as the README
 * describes (against the demo's state); `FILE` is a config that lists the sandbox wallets with their
 * key files. Two runs bind ports of their own: `sandbox` always gets free `--port` and `--chain-port`
 * (replacing the documented 8787 and 8899, the machine's and everyone's), and the demo (`start` with no
 * config) gets free ports through KEEPER_SERVICE_URL and KEEPER_RPC_URL. The commands that drive a
 * sandbox (`sandbox resolve|price|advance|fund`) run to their end against the test sandbox
 * (KEEPER_SANDBOX_URL, or `--url URL`), each resolve or price on a market still open. `sandbox
 * record` runs to its end on a sandbox of its own, into a new directory each run; `replay` reads a
 * recording of the sandbox's world made in beforeAll (`<recording>`).
 *
 * Lines that need what this machine lacks are not run here, and are checked where they can be:
 * `docker compose ...` (no Docker engine) by test/e2e/compose-stack.test.ts, against compose.yaml.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import { recordSandbox } from "../../src/cli/sandbox-record.js";
import { redisKeys } from "../../src/keeper/names.js";
import { Ledger } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  runCli,
  spawnCli,
  startTestSandbox,
  writeWalletKeyFiles,
} from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

/** A doc's text with its fenced blocks blanked out (same length): their ``` would pair with spans' backticks. */
function proseOf(file: string): string {
  const text = readFileSync(join(process.cwd(), file), "utf8");
  return text.replace(/^```[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, " "));
}

const KEEPER_PREFIX = /^(?:npx keeper|keeper|npm run keeper --)\s+/;

/** A doc's command synopses, in order, without the `npx keeper` in front. */
function synopsesOf(file: string): string[] {
  const doc = proseOf(file);
  const found: string[] = [];
  const table = /^\| Command .*\n\|[-| ]+\n((?:\|.*\n)+)/m.exec(doc);
  const tableStart = table ? table.index + table[0].length - (table[1]?.length ?? 0) : -1;
  const tableEnd = table ? table.index + table[0].length : -1;
  for (const span of doc.matchAll(/`((?:[^`\\]|\\.)+)`/g)) {
    const text = (span[1] ?? "").replaceAll("\\|", "|");
    const lineStart = doc.lastIndexOf("\n", span.index) + 1;
    const inFirstCell =
      span.index >= tableStart &&
      span.index < tableEnd &&
      !doc.slice(lineStart + 1, span.index).includes("|");
    if (inFirstCell) found.push(text);
    else if (KEEPER_PREFIX.test(text)) found.push(text.replace(KEEPER_PREFIX, ""));
  }
  return found.filter((s) => !s.includes("<command>"));
}

type Token = { kind: "word"; alternatives: string[] } | { kind: "optional"; alternatives: string[][] };

function tokensOf(synopsis: string): Token[] {
  return [...synopsis.matchAll(/\[[^\]]*\]|\S+/g)].map(([token]) =>
    token.startsWith("[")
      ? {
          kind: "optional",
          alternatives: token
            .slice(1, -1)
            .split("|")
            .map((a) => a.trim().split(/\s+/)),
        }
      : { kind: "word", alternatives: token.split("|") },
  );
}

/** The command lines of one synopsis, placeholders still in them. */
function formsOf(synopsis: string): string[][] {
  const tokens = tokensOf(synopsis);
  const widest = Math.max(1, ...tokens.map((t) => t.alternatives.length));
  const forms: string[][] = [tokens.flatMap((t) => (t.kind === "word" ? [t.alternatives[0] ?? ""] : []))];
  for (let i = 0; i < widest; i += 1)
    forms.push(
      tokens.flatMap((t) => {
        const pick = t.alternatives[Math.min(i, t.alternatives.length - 1)] ?? [];
        return typeof pick === "string" ? [pick] : pick;
      }),
    );
  return forms;
}

const DOCS = [
  "README.md",
  "strategies/README.md",
  ...readdirSync("docs")
    .filter((n) => n.endsWith(".md"))
    .map((n) => `docs/${n}`),
];

const FORMS: ReadonlyArray<readonly string[]> = (() => {
  const seen = new Set<string>();
  const out: string[][] = [];
  const all = DOCS.flatMap(synopsesOf);
  // `keeper retry` in a sentence beside `retry <intent-key> [--json]` names the command; it is not a
  // command line of its own (the longer one's forms cover what it could mean).
  const lines = all.filter((s) => !all.some((longer) => longer.startsWith(`${s} `)));
  for (const synopsis of lines)
    for (const form of formsOf(synopsis)) {
      const key = form.join(" ");
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(form);
    }
  return out;
})();

const isPlaceholder = (word: string) => /^<[^>]+>$/.test(word) || /^[A-Z]+$/.test(word);

/**
 * What the docs say a command does other than exit 0. `close-all` without a terminal and without
 * `--yes` refuses with exit 2 (strategies/README.md, "close-all"); it acts on a configured wallet, so
 * it runs with FILE as KEEPER_CONFIG, or it would be refused for naming an unknown wallet instead.
 */
const DOCUMENTED_OUTCOMES: Record<string, { exit: number; stderr: RegExp; withConfig: boolean }> = {
  "close-all": { exit: 2, stderr: /refusing without confirmation; no terminal to ask on/, withConfig: true },
};

/**
 * `sandbox` subcommands that end: those that act on a running sandbox, and `record`, which runs a
 * sandbox of its own on free ports (the plain `sandbox` runs until stopped).
 */
const SANDBOX_DRIVE = new Set(["resolve", "price", "advance", "fund", "record"]);

/** Commands that run until stopped, and the output that says they are up. */
const RUNS_UNTIL_STOPPED: Record<string, RegExp> = {
  start: /keeper started|demo: keeper live/,
  sandbox: /wallets \(\d+\):/,
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

describe("docs are tests: every keeper command line in the READMEs runs and exits as documented", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let env: Record<string, string>;
  /** A placeholder's value, or how to make one just before the run that needs it. */
  let values: Record<string, string | (() => Promise<string>)>;

  /**
   * An intent `retry` admits again: a refused claim, recorded where a run with no config file looks
   * (the demo's state, `<KEEPER_REDIS_PREFIX>-demo`) just before the run, since the demo's start wipes it.
   */
  async function refusedIntent(): Promise<string> {
    const ledger = new Ledger(redis.redis, redisKeys(`${redis.prefix}-demo`, "live"));
    const position = Keypair.generate().publicKey.toBase58();
    const key = `claim-${position}`;
    const wallet = sandbox.wallets[0] ?? "";
    await ledger.admit({
      kind: "claim",
      key,
      wallet,
      strategy: "auto-claim",
      positionPubkey: position,
      reason: "docs",
    });
    await ledger.update(key, { status: "refused", reason: "docs test" });
    return key;
  }

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-docs-cli");
    const dir = await mkdtemp(join(tmpdir(), "keeper-docs-cli-"));
    const apiKeyFile = join(dir, "api-key");
    await writeFile(apiKeyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
    const configFile = join(dir, "keeper.yaml");
    await writeFile(configFile, await writeWalletKeyFiles(sandbox));
    const recording = join(dir, "recording");
    await recordSandbox({ out: recording, minutes: 60, everySeconds: 60, seed: 1 }, () => {});
    env = {
      KEEPER_CONFIG: "",
      KEEPER_SERVICE_URL: sandbox.url,
      KEEPER_API_KEY_FILE: apiKeyFile,
      KEEPER_RPC_URL: sandbox.chain?.url ?? "",
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: redis.prefix,
      KEEPER_OPS_PORT: "0",
    };
    env.KEEPER_SANDBOX_URL = sandbox.url;
    const openMarkets = sandbox.world.markets
      .filter((m) => sandbox.world.marketState(m).status === "open")
      .map((m) => m.marketId);
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const [event] = (await client.prediction.listEvents({ start: 0, end: 1 })).data;
    const wallet = sandbox.wallets[0] ?? "";
    values = {
      FILE: configFile,
      // The role that does the most at start: loads the keys from FILE's key files, checks the RPC.
      R: "signer",
      TEXT: "docs test",
      N: "5",
      "<owner>": wallet,
      "<address>": wallet,
      "<pubkey>": wallet,
      "<eventId>": event?.eventId ?? "",
      "<query>": "USDC",
      "<intent-key>": refusedIntent,
      // A fresh directory each run: the sandbox writes key files there.
      DIR: async () => join(await mkdtemp(join(tmpdir(), "keeper-docs-keys-")), "keys"),
      // What `replay` reads: made here, so no replay depends on the order of the docs' lines (each
      // `sandbox record` writes a new one instead, see the run below).
      "<recording>": recording,
      URL: sandbox.url,
      // Each resolve or price gets a market nobody resolved yet.
      "<marketId>": async () => openMarkets.shift() ?? "",
      "<price>": "0.72",
      "<seconds>": "60",
      "<wallet>": wallet,
      "<amount>": "5",
      MINT: "USDT",
    };
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("finds the README's commands", () => {
    const commands = new Set(FORMS.map((form) => form[0]));
    expect([...commands]).toEqual(expect.arrayContaining(["start", "sandbox", "status", "config", "tokens"]));
  });

  it.each(FORMS.map((form) => [form.join(" "), form] as const))(
    "keeper %s",
    async (_line, form) => {
      const missing = form.filter((word) => isPlaceholder(word) && values[word] === undefined);
      expect(missing, "placeholders without a value in `values` (beforeAll)").toEqual([]);
      let args: string[] = [];
      const isRecord = form[0] === "sandbox" && form[1] === "record";
      for (const word of form) {
        // `sandbox record` refuses a directory that holds a recording: each run writes a new one.
        const fresh = async () => join(await mkdtemp(join(tmpdir(), "keeper-docs-rec-")), "recording");
        const value = isPlaceholder(word)
          ? isRecord && word === "<recording>"
            ? fresh
            : values[word]
          : word;
        args.push(typeof value === "function" ? await value() : (value ?? word));
      }
      const runEnv = { ...env };
      const command =
        args[0] === "sandbox" && SANDBOX_DRIVE.has(args[1] ?? "") ? `sandbox ${args[1]}` : (args[0] ?? "");
      if (command === "sandbox") {
        args = [...withoutOption(withoutOption(args, "--port"), "--chain-port")];
        args.push("--port", String(await freePort()), "--chain-port", String(await freePort()));
      }
      const isDemo = command === "start" && !args.includes("--config");
      if (isDemo) {
        runEnv.KEEPER_SERVICE_URL = `http://127.0.0.1:${await freePort()}`;
        runEnv.KEEPER_RPC_URL = `http://127.0.0.1:${await freePort()}`;
      }

      const documented = DOCUMENTED_OUTCOMES[command];
      if (documented) {
        if (documented.withConfig) runEnv.KEEPER_CONFIG = String(values.FILE);
        const run = await runCli(args, runEnv);
        expect(run.stderr).toMatch(documented.stderr);
        expect(run.code).toBe(documented.exit);
        return;
      }
      const ready = RUNS_UNTIL_STOPPED[command];
      if (ready === undefined) {
        const run = await runCli(args, runEnv);
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        // "Every read command prints a table, or JSON with --json."
        if (args.includes("--json")) expect(() => JSON.parse(run.stdout)).not.toThrow();
        return;
      }
      const run = spawnCli(args, runEnv);
      try {
        // A process that starts a sandbox and its chain through tsx: slow on a busy machine.
        await eventually(
          `keeper ${args.join(" ")} is up`,
          async () => (ready.test(run.output()) ? true : undefined),
          90_000,
        );
        // "While it runs, `npx keeper status` and `npx keeper ledger` show its state."
        if (isDemo)
          await eventually(
            "keeper status shows the demo's polls",
            async () => {
              const status = await runCli(["status", "--json"], runEnv);
              const { lastPolls } = JSON.parse(status.stdout) as { lastPolls: Record<string, string> };
              return Object.keys(lastPolls).length > 0 ? true : undefined;
            },
            60_000,
          );
      } catch (error) {
        await run.kill("SIGKILL");
        throw new Error(`${(error as Error).message}\n${run.output()}`);
      }
      run.child.kill("SIGTERM");
      expect(await run.exited, run.output()).toBe(0);
    },
    240_000,
  );
});

/** `args` without `--name value`. */
function withoutOption(args: readonly string[], name: string): string[] {
  const at = args.indexOf(name);
  return at < 0 ? [...args] : [...args.slice(0, at), ...args.slice(at + 2)];
}
