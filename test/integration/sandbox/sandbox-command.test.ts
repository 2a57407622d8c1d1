import { EventEmitter } from "node:events";
import { chmod, mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import { Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { ConfigError } from "../../../src/core/errors.js";
import { SANDBOX_POOL_PROGRAM_ID } from "../../../src/sandbox/chain/pool-program.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { registerSandboxCommand, runSandboxCommand, SANDBOX_DEFAULTS } from "../../../src/sandbox/main.js";
import { createWorld } from "../../../src/sandbox/world/world.js";
import { rawRequest } from "../../helpers/raw-http.js";

/** A `keeper`-like program holding only `sandbox`; commander errors are thrown, not exited on. */
function keeperProgram(io: { signals?: EventEmitter; onStarted?: (s: RunningSandbox) => void } = {}) {
  const lines: string[] = [];
  const errors: string[] = [];
  const program = new Command()
    .name("keeper")
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: (text) => errors.push(text) });
  registerSandboxCommand(program, (line) => lines.push(line), io);
  return { program, lines, errors };
}

/** Runs `keeper sandbox ...args` until it is up, then stops it with SIGTERM; returns what it printed. */
async function runThroughCommander(
  args: readonly string[],
  whileUp: (sandbox: RunningSandbox) => Promise<void> = async () => {},
) {
  const signals = new EventEmitter();
  let started: RunningSandbox | undefined;
  const { program, lines } = keeperProgram({ signals, onStarted: (s) => (started = s) });
  const running = program.parseAsync(["node", "keeper", "sandbox", ...args]);
  await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
  const sandbox = started as RunningSandbox;
  const status = (
    await fetch(`${sandbox.url}/prediction/v1/leaderboards?limit=1`, {
      headers: { "x-api-key": sandbox.apiKey },
    })
  ).status;
  try {
    await whileUp(sandbox);
  } finally {
    signals.emit("SIGTERM", "SIGTERM");
  }
  await running;
  return { sandbox, lines, status };
}

const walletsOf = (seed: number) => createWorld({ seed }).wallets();

describe("keeper sandbox", () => {
  it("prints the URL, the key and the wallets, serves until SIGTERM, then closes", async () => {
    const lines: string[] = [];
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const running = runSandboxCommand(
      { port: 0, apiKey: "cli-key", seed: 7 },
      { print: (line) => lines.push(line), signals, onStarted: (s) => (started = s) },
    );
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const sandbox = started as RunningSandbox;
    expect(lines[0]).toBe(`sandbox service  ${sandbox.url}`);
    expect(lines).toContain("api key          cli-key");
    expect(lines).toContain(`openapi          ${sandbox.url}/openapi.json`);
    for (const wallet of sandbox.wallets) expect(lines).toContain(`  ${wallet}`);
    const response = await fetch(`${sandbox.url}/prediction/v1/leaderboards`, {
      headers: { "x-api-key": "cli-key" },
    });
    expect(response.status).toBe(200);

    signals.emit("SIGTERM", "SIGTERM");
    await running;
    expect(lines.at(-1)).toBe("SIGTERM: stopping the sandbox");
    await expect(fetch(`${sandbox.url}/prediction/v1/leaderboards`)).rejects.toThrow();
  });

  it("checks its own answers against /openapi.json: a violation is warned of, counted, and still answered", async () => {
    const lines: string[] = [];
    const warnings: string[] = [];
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const running = runSandboxCommand(
      { port: 0 },
      {
        print: (line) => lines.push(line),
        warn: (line) => warnings.push(line),
        signals,
        onStarted: (s) => (started = s),
      },
    );
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const sandbox = started as RunningSandbox;
    const counts = `${sandbox.url}/__sandbox/response-check`;
    expect(lines).toContain(`self-check       answers checked against /openapi.json; counts at ${counts}`);
    const headers = { "x-api-key": sandbox.apiKey };
    const market = sandbox.world.markets[0];
    if (market === undefined) throw new Error("the sandbox has no market");
    expect((await fetch(`${sandbox.url}/prediction/v1/markets/${market.marketId}`, { headers })).status).toBe(
      200,
    );
    expect(await (await fetch(counts)).json()).toEqual({
      checking: true,
      validated: 1,
      violations: 0,
      recent: [],
    });
    // The world drifts from the document: a market title that is not a string.
    (market as { title: unknown }).title = 42;
    const drifted = await fetch(`${sandbox.url}/prediction/v1/markets/${market.marketId}`, { headers });
    expect(drifted.status).toBe(200);
    expect(warnings).toEqual([
      "warning: getMarket answered 200 with a body that does not match /openapi.json: body/title must be string",
    ]);
    const after = (await (await fetch(counts)).json()) as {
      validated: number;
      violations: number;
      recent: string[];
    };
    expect(after).toMatchObject({ checking: true, validated: 2, violations: 1 });
    expect(after.recent[0]).toMatch(/\(getMarket\): body\/title must be string/);
    signals.emit("SIGTERM", "SIGTERM");
    // Logged and counted, not thrown: the command closes as usual.
    await running;
  });

  it("refuses a port that is taken with a configuration error naming --port", async () => {
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const first = runSandboxCommand(
      { port: 0 },
      { print: () => {}, signals, onStarted: (s) => (started = s) },
    );
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const port = Number(new URL((started as RunningSandbox).url).port);
    await expect(runSandboxCommand({ port }, { print: () => {}, signals })).rejects.toThrow(ConfigError);
    await expect(runSandboxCommand({ port }, { print: () => {}, signals })).rejects.toThrow(/--port/);
    signals.emit("SIGINT", "SIGINT");
    await first;
  });

  it("keeper sandbox --port 0 --api-key k2 --seed 3: the flags reach the sandbox", async () => {
    const { sandbox, lines, status } = await runThroughCommander([
      "--port",
      "0",
      "--api-key",
      "k2",
      "--seed",
      "3",
    ]);
    expect(status).toBe(200);
    const port = Number(new URL(sandbox.url).port);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(SANDBOX_DEFAULTS.port);
    expect(lines[0]).toBe(`sandbox service  ${sandbox.url}`);
    expect(lines).toContain("api key          k2");
    expect(sandbox.apiKey).toBe("k2");
    // The world is seed 3's: its wallets are printed, and they are not seed 1's.
    expect(sandbox.world.seed).toBe(3);
    const printed = lines.filter((l) => l.startsWith("  ")).map((l) => l.trim());
    expect(printed).toEqual([...walletsOf(3)]);
    expect(printed.some((w) => walletsOf(1).includes(w))).toBe(false);
    expect(lines.at(-1)).toBe("SIGTERM: stopping the sandbox");
  });

  it("keeper sandbox --allowed-host: those names are answered besides loopback, any other gets 421", async () => {
    const signals = new EventEmitter();
    let started: RunningSandbox | undefined;
    const { program } = keeperProgram({ signals, onStarted: (s) => (started = s) });
    const running = program.parseAsync([
      "node",
      "keeper",
      "sandbox",
      "--port",
      "0",
      "--allowed-host",
      "sandbox.lan",
      "--allowed-host",
      "paper.internal",
    ]);
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const sandbox = started as RunningSandbox;
    const statusFor = async (host: string) =>
      (
        await rawRequest(`${sandbox.url}/prediction/v1/leaderboards?limit=1`, {
          headers: { host, "x-api-key": sandbox.apiKey },
        })
      ).status;
    expect(await statusFor("sandbox.lan:8787")).toBe(200);
    expect(await statusFor("paper.internal")).toBe(200);
    expect(await statusFor("localhost")).toBe(200);
    expect(await statusFor("evil.example")).toBe(421);
    signals.emit("SIGTERM", "SIGTERM");
    await running;
  });

  it("keeper sandbox --chain-port puts the local chain there, and a taken one is refused naming it", async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const { sandbox, lines } = await runThroughCommander(["--port", "0", "--chain-port", String(free)]);
    expect(sandbox.chain?.url).toBe(`http://127.0.0.1:${free}`);
    expect(lines).toContain(`chain rpc        http://127.0.0.1:${free}`);
    // What a keeper pointed at it must set: swaps settle later. Claims pay mainnet USDC's mint, the
    // default payout mint, and the well-known tokens sit at their mainnet addresses on the chain.
    // Forecast swaps are co-signed by the sandbox's vault at execute: the signer must accept that key.
    const vault = sandbox.chain?.assets.vault.publicKey.toBase58();
    expect(lines).toContain(
      `keeper signer    { allowedPrograms: [${SANDBOX_POOL_PROGRAM_ID.toBase58()}], serviceSigners: [${vault}] }`,
    );
    expect(sandbox.usdcMint).toBe("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    expect(lines.find((l) => l.startsWith("token mints"))).toContain(
      "USDT Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
    );
    for (const mint of [
      "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
      "So11111111111111111111111111111111111111112",
    ]) {
      const account = sandbox.chain?.chain.getAccount(new PublicKey(mint));
      expect(account?.owner.toBase58(), mint).toBe(TOKEN_PROGRAM_ID.toBase58());
    }

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(free, "127.0.0.1", resolve));
    try {
      await expect(
        runSandboxCommand({ port: 0, chainPort: free }, { print: () => {}, signals: new EventEmitter() }),
      ).rejects.toThrow(`--chain-port: ${free} is already in use`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("without --api-key and --seed, commander passes the documented defaults", async () => {
    const { sandbox, lines } = await runThroughCommander(["--port", "0"]);
    expect(lines).toContain(`api key          ${SANDBOX_DEFAULTS.apiKey}`);
    expect(sandbox.world.seed).toBe(SANDBOX_DEFAULTS.seed);
    const printed = lines.filter((l) => l.startsWith("  ")).map((l) => l.trim());
    expect(printed).toEqual([...walletsOf(SANDBOX_DEFAULTS.seed)]);
  });

  it.each([
    [["--port", "-1"], "--port", "integer from 0 to 65535"],
    [["--port", "65536"], "--port", "integer from 0 to 65535"],
    [["--port", "80.5"], "--port", "integer from 0 to 65535"],
    [["--port", "0", "--seed", "x"], "--seed", "integer from 0 to 4294967295"],
    [["--port", "0", "--seed", "-3"], "--seed", "integer from 0 to 4294967295"],
    [["--port", "0", "--api-key", ""], "--api-key", "must not be empty"],
    [["--port", "0", "--api-key", "   "], "--api-key", "must not be empty"],
    [["--port", "0", "--allowed-host", "http://sandbox.lan"], "--allowed-host", "without scheme or port"],
    [["--port", "0", "--allowed-host", "sandbox.lan:8787"], "--allowed-host", "without scheme or port"],
  ] as const)("keeper sandbox %j is refused naming %s", async (args, flag, rule) => {
    // "--port 0" beside a bad flag: were the flag let through, the sandbox would not take port 8787.
    const onStarted = (s: RunningSandbox) => {
      void s.close();
      throw new Error("the sandbox started despite a bad flag");
    };
    const { program, errors } = keeperProgram({ signals: new EventEmitter(), onStarted });
    const error = await program.parseAsync(["node", "keeper", "sandbox", ...args]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommanderError);
    const commanderError = error as CommanderError;
    expect(commanderError.code).toBe("commander.invalidArgument");
    expect(commanderError.exitCode).not.toBe(0);
    expect(commanderError.message).toContain(flag);
    expect(commanderError.message).toContain(rule);
    expect(errors.join("")).toContain(flag);
  });

  it("--keys-dir into a directory others may enter: the files are still 0600, and it says so", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keeper-keys-open-")), "keys");
    await mkdir(dir, { mode: 0o755 });
    const { lines } = await runThroughCommander(["--port", "0", "--keys-dir", dir]);
    expect(lines).toContain(`warning          ${dir} is open to others (mode 755): chmod 700 it`);
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
    expect((await stat(join(dir, "wallet-0.json"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "keeper.yaml"))).mode & 0o777).toBe(0o600);
    expect(lines).toContain(
      `# ${join(dir, "keeper.yaml")}: npx keeper start --config ${join(dir, "keeper.yaml")}`,
    );
  });

  it("keeper sandbox --wallets 1500 --events-per-category 1 --keys-dir: a fleet config Keeper loads, its sweeps fit the plan", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keeper-keys-fleet-")), "keys");
    const { sandbox, lines, status } = await runThroughCommander([
      ...["--port", "0", "--wallets", "1500", "--events-per-category", "1", "--keys-dir", dir],
    ]);
    expect(status).toBe(200);
    expect(sandbox.wallets).toHaveLength(1_500);
    // One event in each category of each provider.
    const eventIds = sandbox.world.events.map((e) => e.eventId);
    expect(eventIds).toContain("POLY-CRYPTO-001");
    expect(eventIds).not.toContain("POLY-CRYPTO-002");
    expect(lines).toContain("wallets (1500):");
    expect(lines).toContain("  ... and 1496 more (--keys-dir writes every one into keeper.yaml)");
    expect(lines).toContain("# (1500 wallets: the config is not printed)");
    expect((await readdir(dir)).filter((f) => f.startsWith("wallet-"))).toHaveLength(1_500);
    const config = await loadConfig({ file: join(dir, "keeper.yaml"), env: {} });
    expect(config.wallets).toHaveLength(1_500);
    expect(config.wallets[1_499]?.pubkey).toBe(sandbox.wallets[1_499]);
    expect(config.service).toMatchObject({ requestsPerSecond: 150, rateLimitWindowSeconds: 60 });
    // Positions every minute and orders every 2: 1,500 + 2 × 1,500 / 2 reads a minute, 50 a second.
    expect(config.schedules).toMatchObject({ pollPositions: "0 * * * * *", pollOrders: "0 */2 * * * *" });
  }, 60_000);

  it("keeper sandbox --wallets 40 --idle-wallet-pct 50: about half the wallets past the first four hold nothing", async () => {
    /** Each wallet's positions as the service lists them. */
    const positionsOf = async (args: readonly string[]) => {
      const counts: number[] = [];
      await runThroughCommander(["--port", "0", "--wallets", "40", ...args], async (sandbox) => {
        for (const wallet of sandbox.wallets) {
          const answer = await fetch(`${sandbox.url}/prediction/v1/positions?ownerPubkey=${wallet}&end=100`, {
            headers: { "x-api-key": sandbox.apiKey },
          });
          counts.push(((await answer.json()) as { data: unknown[] }).data.length);
        }
      });
      return counts;
    };
    const idle = await positionsOf(["--idle-wallet-pct", "50"]);
    expect(idle.slice(0, 4).every((n) => n > 0)).toBe(true);
    const empty = idle.slice(4).filter((n) => n === 0).length;
    expect(empty).toBeGreaterThanOrEqual(9);
    expect(empty).toBeLessThanOrEqual(27);
    // Without the flag every wallet holds something.
    expect((await positionsOf([])).filter((n) => n === 0)).toEqual([]);
  }, 60_000);

  /** `keeper sandbox --port 0 --keys-dir DIR` in this process, to the error it stops with. */
  async function refusalOf(dir: string, wallets?: number): Promise<readonly string[]> {
    const signals = new EventEmitter();
    const onStarted = (s: RunningSandbox) => {
      void s.close();
      throw new Error(`the sandbox at ${s.url} wrote its keys despite the refusal`);
    };
    const error = await runSandboxCommand(
      { port: 0, keysDir: dir, ...(wallets === undefined ? {} : { wallets }) },
      { print: () => {}, signals, onStarted },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }

  it("--keys-dir never writes a key through a link planted in the directory: refused, the target untouched", async () => {
    const base = await mkdtemp(join(tmpdir(), "keeper-keys-planted-"));
    const victim = join(base, "victim.txt");
    await writeFile(victim, "the victim's own content\n", { mode: 0o644 });
    const dir = join(base, "keys");
    await mkdir(dir, { mode: 0o700 });
    const planted = join(dir, "wallet-0.json");
    await symlink(victim, planted);
    expect(await refusalOf(dir)).toEqual([
      `--keys-dir: ${planted} is a symbolic link: key files are written only as new files of their own; remove it and run again`,
    ]);
    expect(await readFile(victim, "utf8")).toBe("the victim's own content\n");
    expect((await stat(victim)).mode & 0o777).toBe(0o644);
    expect(await readdir(dir)).toEqual(["wallet-0.json"]);
  });

  it("--keys-dir with --wallets 40: a link planted at wallet 33 stops every key file, none written", async () => {
    const base = await mkdtemp(join(tmpdir(), "keeper-keys-planted-fleet-"));
    const victim = join(base, "victim.txt");
    await writeFile(victim, "the victim's own content\n", { mode: 0o644 });
    const dir = join(base, "keys");
    await mkdir(dir, { mode: 0o700 });
    const planted = join(dir, "wallet-33.json");
    await symlink(victim, planted);
    expect(await refusalOf(dir, 40)).toEqual([
      `--keys-dir: ${planted} is a symbolic link: key files are written only as new files of their own; remove it and run again`,
    ]);
    expect(await readFile(victim, "utf8")).toBe("the victim's own content\n");
    expect(await readdir(dir)).toEqual(["wallet-33.json"]);
  });

  it.each(["0777", "1777", "0770", "0720"])(
    "--keys-dir refuses a directory others can write to (mode %s) and writes nothing there",
    async (octal) => {
      const mode = Number.parseInt(octal, 8);
      const dir = join(await mkdtemp(join(tmpdir(), "keeper-keys-shared-")), "keys");
      await mkdir(dir);
      await chmod(dir, mode);
      const shown = (mode & 0o777).toString(8).padStart(4, "0");
      expect(await refusalOf(dir)).toEqual([
        `--keys-dir: ${dir} can be written by group or others (mode ${shown}): a key file could be written through a link planted there; use a directory only you can write to (chmod 700 ${dir})`,
      ]);
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it("--keys-dir run again into its own directory replaces the files it wrote (0600)", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keeper-keys-again-")), "keys");
    await runThroughCommander(["--port", "0", "--keys-dir", dir, "--seed", "3"]);
    const first = await readFile(join(dir, "wallet-0.json"), "utf8");
    await runThroughCommander(["--port", "0", "--keys-dir", dir, "--seed", "4"]);
    const second = await readFile(join(dir, "wallet-0.json"), "utf8");
    expect(second).not.toBe(first);
    expect((await stat(join(dir, "wallet-0.json"))).mode & 0o777).toBe(0o600);
  });
});
