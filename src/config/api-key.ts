import { isLoopback, type KeeperConfig } from "./load-config.js";

/** The sandbox's published default key: used only when the configured service is on this machine. */
export const SANDBOX_API_KEY = "sandbox-key";

/**
 * The API key from the environment or its file; the sandbox's own key for a service on loopback;
 * otherwise none: the live service answers requests without a key at its keyless limits (api-live),
 * so a missing key is not an error (a wrong one is: 401).
 */
export function apiKeyFor(config: KeeperConfig): string | undefined {
  if (config.secrets.apiKey) return config.secrets.apiKey;
  if (isLoopback(config.service.baseUrl)) return SANDBOX_API_KEY;
  return undefined;
}

/**
 * What `apiKeyFor` sends, in words for a message: `source` is the setting to fix (the one the key was
 * read from), `key` says which key it was. Never the key itself.
 */
export function describeApiKey(config: KeeperConfig): { source: string; key: string } {
  const source = config.secrets.apiKey ? config.secrets.apiKeySource : undefined;
  if (source === "KEEPER_API_KEY") return { source, key: "the key" };
  if (source) return { source, key: `the key in ${config.service.apiKeyFile}` };
  const neither = "KEEPER_API_KEY, service.apiKeyFile";
  return apiKeyFor(config) === SANDBOX_API_KEY
    ? { source: neither, key: "the sandbox's default key (neither is set)" }
    : { source: neither, key: "a request without a key (neither is set)" };
}
