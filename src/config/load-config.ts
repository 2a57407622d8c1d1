import { constants, existsSync } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { builtInStrategies } from "../../strategies/index.js";
import { ConfigError } from "../core/errors.js";
import type { Strategy } from "../core/strategy.js";
import { STRATEGY_HOOK_NAMES } from "../core/strategy-hooks.js";
import { urlHasPassword } from "../ops/secret-forms.js";
import { formatIssues, formatPath } from "./format-issues.js";
import { recordDirProblem } from "./record-dir.js";
import { configSchema, type ParsedConfig, SECRET_KEYS, strategyEntrySchema } from "./schema.js";
import { readSecretFile } from "./secret-file.js";

/**
 * The package's root: the nearest folder above this module that holds package.json. The module runs
 * from src/config in a checkout and from dist/src/config when built, so no fixed relative path fits both.
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

const DEFAULT_FILE = join(packageRoot(), "config", "default.yaml");

/**
 * A user strategy may be TypeScript. In a checkout everything already runs through tsx; the built
 * keeper (plain node on dist/) registers tsx's loader the first time it meets a .ts strategy.
 */
let typeScriptLoader: Promise<void> | undefined;
function ensureTypeScriptLoader(): Promise<void> {
  if (import.meta.url.endsWith(".ts")) return Promise.resolve();
  typeScriptLoader ??= import("tsx/esm/api").then(({ register }) => {
    register();
  });
  return typeScriptLoader;
}

/** Environment variables that override config paths. Secrets have their own variables below. */
export const ENV_OVERRIDES: ReadonlyArray<{
  env: string;
  path: readonly string[];
  /** `list`: comma-separated, blanks dropped. */
  type: "string" | "number" | "list";
}> = [
  { env: "KEEPER_MODE", path: ["mode"], type: "string" },
  { env: "KEEPER_SERVICE_URL", path: ["service", "baseUrl"], type: "string" },
  { env: "KEEPER_API_KEY_FILE", path: ["service", "apiKeyFile"], type: "string" },
  { env: "KEEPER_REQUESTS_PER_SECOND", path: ["service", "requestsPerSecond"], type: "number" },
  { env: "KEEPER_RPC_URL", path: ["rpc", "url"], type: "string" },
  { env: "KEEPER_REDIS_URL", path: ["redis", "url"], type: "string" },
  { env: "KEEPER_REDIS_PREFIX", path: ["redis", "prefix"], type: "string" },
  { env: "KEEPER_REDIS_CLUSTER", path: ["redis", "cluster"], type: "list" },
  { env: "KEEPER_REDIS_PASSWORD_FILE", path: ["redis", "passwordFile"], type: "string" },
  { env: "KEEPER_LOG_LEVEL", path: ["ops", "logLevel"], type: "string" },
  { env: "KEEPER_LOG_FORMAT", path: ["ops", "logFormat"], type: "string" },
  { env: "KEEPER_OPS_HOST", path: ["ops", "host"], type: "string" },
  { env: "KEEPER_OPS_PORT", path: ["ops", "port"], type: "number" },
  { env: "KEEPER_OPS_ALLOWED_HOSTS", path: ["ops", "allowedHosts"], type: "list" },
];

export interface ConfiguredStrategy {
  /** Where it is in the config file's `strategies:` list, for messages. */
  readonly index?: number;
  readonly name: string;
  /** The user module's absolute path; absent for a built-in strategy. */
  readonly module?: string;
  readonly strategy: Strategy<unknown>;
  readonly config: unknown;
}

export interface KeeperConfig extends Omit<ParsedConfig, "mode" | "strategies"> {
  /** The mode chosen once at start-up. */
  readonly mode: "live" | "dry-run";
  readonly requestedMode: ParsedConfig["mode"];
  /**
   * The enabled strategies. Loaded with `strategyModules: "check"`, user modules are left out: only
   * their files were checked, and `strategyModules` says so.
   */
  readonly strategies: readonly ConfiguredStrategy[];
  readonly strategyModules: StrategyModules;
  /** Where the config came from, for messages (never a secret). */
  readonly sources: readonly string[];
  readonly secrets: KeeperSecrets;
}

/** Where the API key was read from: the variable, or the file named by the variable or the config. */
export type ApiKeySource = "KEEPER_API_KEY" | "KEEPER_API_KEY_FILE" | "service.apiKeyFile";

/** Secrets live apart from the config so that printing the config cannot print them. */
export class KeeperSecrets {
  readonly #apiKey: string | undefined;
  readonly #webhookUrl: string | undefined;
  readonly #adminToken: string | undefined;
  readonly #redisPassword: string | undefined;
  readonly #apiKeySource: ApiKeySource | undefined;
  constructor(
    apiKey: string | undefined,
    webhookUrl: string | undefined,
    adminToken?: string,
    redisPassword?: string,
    apiKeySource?: ApiKeySource,
  ) {
    this.#apiKey = apiKey;
    this.#webhookUrl = webhookUrl;
    this.#adminToken = adminToken;
    this.#redisPassword = redisPassword;
    this.#apiKeySource = apiKey === undefined ? undefined : apiKeySource;
  }
  get apiKey(): string | undefined {
    return this.#apiKey;
  }
  /** Where the API key came from, for messages (a key refused names it); undefined with no key. */
  get apiKeySource(): ApiKeySource | undefined {
    return this.#apiKeySource;
  }
  get webhookUrl(): string | undefined {
    return this.#webhookUrl;
  }
  /** The operator token of the ops server (ops.adminTokenFile). */
  get adminToken(): string | undefined {
    return this.#adminToken;
  }
  /** The password of every Redis connection (redis.passwordFile). */
  get redisPassword(): string | undefined {
    return this.#redisPassword;
  }
  toJSON(): Record<string, string> {
    const shown = (value: string | undefined) => (value ? "[set]" : "[unset]");
    return {
      apiKey: shown(this.#apiKey),
      webhookUrl: shown(this.#webhookUrl),
      adminToken: shown(this.#adminToken),
      redisPassword: shown(this.#redisPassword),
    };
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `KeeperSecrets ${JSON.stringify(this.toJSON())}`;
  }
}

/**
 * `import` loads user strategy modules (`strategies[].module`) and validates their config; `check` only
 * checks that each file is there and readable, so a process that must not run user code (the signer)
 * never imports one.
 */
export type StrategyModules = "import" | "check";

export interface LoadConfigOptions {
  /** The user's file (`--config` or KEEPER_CONFIG). */
  readonly file?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Default `import`. */
  readonly strategyModules?: StrategyModules;
  /**
   * Refuse a config that names no wallet, as a keeper started from it would (`keeper start`, and
   * `keeper config check` of a file): a keeper with no wallet has nothing to do.
   */
  readonly requireWallets?: boolean;
}

/** The problem of a config with no wallets, worded once for every command that refuses one. */
export const NO_WALLETS_PROBLEM = "wallets: at least one wallet is required to run the keeper";

/**
 * Reads config/default.yaml, the user's file and KEEPER_* variables; validates everything and throws
 * one ConfigError listing every problem by path. Nothing is started before this succeeds.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<KeeperConfig> {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const sources = [DEFAULT_FILE];
  let raw = asRecord(await readYaml(DEFAULT_FILE, problems));
  const userFile = options.file ?? env.KEEPER_CONFIG;
  if (userFile) {
    sources.push(userFile);
    const user = await readYaml(userFile, problems);
    if (user !== undefined && (typeof user !== "object" || Array.isArray(user))) {
      problems.push(`${userFile}: expected a mapping of config keys at the top level`);
    } else if (user) {
      const secrets = findSecrets(user as Record<string, unknown>);
      problems.push(...secrets);
      // A secret found is reported, not used: drop the file's values so the schema reports the rest.
      raw = deepMerge(raw, secrets.length > 0 ? withoutSecrets(user) : (user as Record<string, unknown>));
    }
  }
  raw = applyEnv(raw, env, problems);

  // Every check runs before anything is reported, so one run lists every problem.
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) problems.push(...formatIssues(parsed.error));
  // Read from the merged input, so it is reported along with any other problem.
  if (options.requireWallets && Array.isArray(raw.wallets) && raw.wallets.length === 0)
    problems.push(NO_WALLETS_PROBLEM);
  const entries = z.array(strategyEntrySchema).safeParse(raw.strategies ?? []);
  const baseDir = userFile ? dirname(resolve(userFile)) : process.cwd();
  const strategyModules = options.strategyModules ?? "import";
  const strategies = entries.success
    ? await resolveStrategies(entries.data, baseDir, strategyModules, problems)
    : [];
  // A live keeper refuses secret files others may read (see readSecretFile); dry-run moves no money.
  const isGuarded = parsed.success && resolveMode(parsed.data.mode, parsed.data.service.baseUrl) === "live";
  const apiKeyFileSource = env.KEEPER_API_KEY_FILE ? "KEEPER_API_KEY_FILE" : "service.apiKeyFile";
  const apiKey = await readSecret(env.KEEPER_API_KEY, parsed.data?.service.apiKeyFile, apiKeyFileSource, {
    isGuarded,
    problems,
  });
  // As readSecret chose: the variable wins over the file.
  const apiKeySource = env.KEEPER_API_KEY ? "KEEPER_API_KEY" : apiKeyFileSource;
  const webhookUrl = await readSecret(
    env.KEEPER_WEBHOOK_URL,
    parsed.data?.notifications.webhookUrlFile,
    "notifications.webhookUrlFile",
    { isGuarded, problems },
  );
  const adminToken = await readSecret(undefined, parsed.data?.ops.adminTokenFile, "ops.adminTokenFile", {
    isGuarded,
    problems,
  });
  const redisPassword = await readRedisPassword(parsed.data?.redis, { isGuarded, problems });
  const recordDir = parsed.data?.record.dir;
  const recordProblem = recordDir === undefined ? undefined : await recordDirProblem(recordDir);
  if (recordProblem) problems.push(recordProblem);
  if (adminToken !== undefined && adminToken.length < 16)
    problems.push("ops.adminTokenFile: expected a token of at least 16 characters");
  // Named by where the URL came from (the variable wins over the file), never echoed: it embeds a token.
  // An empty file is reported above.
  if (webhookUrl && !z.url({ protocol: /^https?$/ }).safeParse(webhookUrl).success)
    problems.push(
      env.KEEPER_WEBHOOK_URL
        ? "KEEPER_WEBHOOK_URL: expected an http(s) URL"
        : `notifications.webhookUrlFile: ${parsed.data?.notifications.webhookUrlFile} does not hold an http(s) URL`,
    );
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const config = parsed.data;

  // Only the config's own data is frozen. A strategy is a library object (its zod schema defines
  // properties such as `shape` on first read, which a frozen schema refuses), so each configured
  // strategy is frozen one level down, with its parsed config, never the strategy itself.
  return Object.freeze({
    ...freezeData(config),
    requestedMode: config.mode,
    mode: resolveMode(config.mode, config.service.baseUrl),
    strategies: Object.freeze(strategies.map((s) => Object.freeze({ ...s, config: freezeData(s.config) }))),
    strategyModules,
    sources: Object.freeze(sources),
    secrets: new KeeperSecrets(apiKey, webhookUrl, adminToken, redisPassword, apiKeySource),
  });
}

/**
 * `auto` signs only against a service on this machine (the sandbox); any other service runs in
 * dry-run unless the config says `mode: live`.
 */
export function resolveMode(mode: ParsedConfig["mode"], baseUrl: string): "live" | "dry-run" {
  if (mode !== "auto") return mode;
  return isLoopback(baseUrl) ? "live" : "dry-run";
}

export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** redis.passwordFile's password, checked against the rules and against a password in redis.url. */
async function readRedisPassword(
  redis: ParsedConfig["redis"] | undefined,
  { isGuarded, problems }: { isGuarded: boolean; problems: string[] },
): Promise<string | undefined> {
  const password = await readSecret(undefined, redis?.passwordFile, "redis.passwordFile", {
    isGuarded,
    problems,
  });
  // Short ones are guessable, and every log line is scrubbed of the password: "redis" would go too.
  if (password && password.length < 16)
    problems.push("redis.passwordFile: expected a password of at least 16 characters");
  if (password !== undefined && redis && urlHasPassword(redis.url))
    problems.push(
      "redis.passwordFile: redis.url already holds a password; give it in one place (the file keeps it out of the config)",
    );
  return password;
}

async function resolveStrategies(
  entries: ReadonlyArray<z.infer<typeof strategyEntrySchema>>,
  baseDir: string,
  modules: StrategyModules,
  problems: string[],
): Promise<ConfiguredStrategy[]> {
  const out: ConfiguredStrategy[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const at = `strategies[${index}]`;
    const { name, enabled, module, ...rest } = entry;
    if (seen.has(name)) problems.push(`${at}.name: strategy "${name}" is configured twice`);
    seen.add(name);
    const file = module ? userStrategyFile(module, baseDir, at, problems) : undefined;
    if (module && !file) continue;
    if (file && modules === "check") {
      await checkUserStrategyFile(file, at, problems);
      continue;
    }
    const strategy = file ? await loadUserStrategy(file, at, problems) : builtInStrategies.get(name);
    if (!strategy) {
      if (!module)
        problems.push(
          `${at}.name: unknown strategy "${name}" (built-in: ${[...builtInStrategies.keys()].join(", ")})`,
        );
      continue;
    }
    if (strategy.name !== name)
      problems.push(`${at}.name: the module's strategy is named "${strategy.name}"`);
    const parsed = strategy.configSchema.safeParse(rest);
    if (!parsed.success) {
      problems.push(...formatIssues(parsed.error, ["strategies", index]));
      continue;
    }
    if (enabled) out.push({ index, name, ...(file ? { module: file } : {}), strategy, config: parsed.data });
  }
  return out;
}

const userStrategyShape = z.looseObject({
  name: z.string().min(1),
  contractVersion: z.literal(1),
  configSchema: z.custom<z.ZodType>((v) => typeof (v as z.ZodType | undefined)?.safeParse === "function", {
    message: "expected a zod schema",
  }),
  evaluate: z.custom<(...args: unknown[]) => unknown>((v) => typeof v === "function", {
    message: "expected a function",
  }),
  // Every hook is optional; one that is there must be a function.
  ...Object.fromEntries(
    STRATEGY_HOOK_NAMES.map((hook) => [
      hook,
      z
        .custom<(...args: unknown[]) => unknown>((v) => typeof v === "function", {
          message: "expected a function",
        })
        .optional(),
    ]),
  ),
});

/** The module's absolute path, or undefined (with a problem) when it cannot be a strategy module. */
function userStrategyFile(modulePath: string, baseDir: string, at: string, problems: string[]) {
  const file = isAbsolute(modulePath) ? modulePath : resolve(baseDir, modulePath);
  if (/\.(ts|js|mjs)$/.test(file)) return file;
  problems.push(`${at}.module: expected a .ts, .js or .mjs file`);
  return undefined;
}

/** Checks a user module without running it: importing is running its top-level code. */
async function checkUserStrategyFile(file: string, at: string, problems: string[]): Promise<void> {
  try {
    if (!(await stat(file)).isFile()) {
      problems.push(`${at}.module: ${file} is not a file`);
      return;
    }
    await access(file, constants.R_OK);
  } catch (error) {
    problems.push(`${at}.module: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

async function loadUserStrategy(
  file: string,
  at: string,
  problems: string[],
): Promise<Strategy<unknown> | undefined> {
  let loaded: Record<string, unknown>;
  try {
    if (file.endsWith(".ts")) await ensureTypeScriptLoader();
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    problems.push(`${at}.module: cannot load ${file}: ${(error as Error).message.split("\n")[0]}`);
    return undefined;
  }
  const candidate = loaded.default ?? loaded.strategy;
  const shape = userStrategyShape.safeParse(candidate);
  if (!shape.success) {
    problems.push(
      ...formatIssues(shape.error).map(
        (p) => `${at}.module: ${file} must export (default or \`strategy\`) a strategy: ${p}`,
      ),
    );
    return undefined;
  }
  return candidate as Strategy<unknown>;
}

async function readYaml(file: string, problems: string[]): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    problems.push(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
    return undefined;
  }
  try {
    return parseYaml(text) ?? {};
  } catch (error) {
    problems.push(`${file}: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

async function readSecret(
  fromEnv: string | undefined,
  file: string | undefined,
  field: string,
  { isGuarded, problems }: { isGuarded: boolean; problems: string[] },
): Promise<string | undefined> {
  if (fromEnv) return fromEnv.trim();
  if (!file) return undefined;
  try {
    const value = (await readSecretFile(file, { key: field, isGuarded })).trim();
    if (value === "") problems.push(`${field}: ${file} is empty`);
    return value;
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else problems.push(`${field}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
    return undefined;
  }
}

/** Secrets never come from YAML: a file can be committed, printed or shared. */
function findSecrets(value: unknown, path: PropertyKey[] = []): string[] {
  if (value === null || typeof value !== "object") return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, Array.isArray(value) ? Number(key) : key];
    if ((SECRET_KEYS as readonly string[]).includes(key))
      found.push(
        `${formatPath(here)}: secrets may not be written in the config file; use an environment variable or a file (see docs/configuration.md)`,
      );
    else found.push(...findSecrets(child, here));
  }
  return found;
}

function withoutSecrets(value: unknown): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (!isPlainObject(v)) return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !(SECRET_KEYS as readonly string[]).includes(k))
        .map(([k, c]) => [k, strip(c)]),
    );
  };
  return strip(value) as Record<string, unknown>;
}

function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]) {
  const out = structuredClone(raw);
  for (const { env: name, path, type } of ENV_OVERRIDES) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const parsed = type === "number" ? Number(value) : type === "list" ? listOf(value) : value;
    if (type === "number" && !Number.isFinite(parsed)) {
      problems.push(`${name}: expected a number`);
      continue;
    }
    let node = out;
    for (const key of path.slice(0, -1)) {
      if (!isPlainObject(node[key])) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[path[path.length - 1] as string] = parsed;
  }
  return out;
}

function listOf(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Mappings merge key by key; arrays and scalars replace. */
function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      isPlainObject(current) && isPlainObject(value) && !("__value" in value)
        ? deepMerge(current, value)
        : value;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function asRecord(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

/** Freezes arrays and plain objects, all the way down; anything else (a class instance) is left alone. */
function freezeData<T>(value: T): T {
  if (Object.isFrozen(value) || !(Array.isArray(value) || isPlainData(value))) return value;
  Object.freeze(value);
  for (const child of Object.values(value as object)) freezeData(child);
  return value;
}

function isPlainData(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
