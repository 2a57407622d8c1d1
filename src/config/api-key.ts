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
