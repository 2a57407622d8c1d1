import { ConfigError } from "../core/errors.js";
import { isLoopback, type KeeperConfig } from "./load-config.js";

/** The sandbox's published default key: used only when the configured service is on this machine. */
export const SANDBOX_API_KEY = "sandbox-key";

/** The API key from the environment or its file; the sandbox's own key for a service on loopback. */
export function apiKeyFor(config: KeeperConfig): string {
  if (config.secrets.apiKey) return config.secrets.apiKey;
  if (isLoopback(config.service.baseUrl)) return SANDBOX_API_KEY;
  throw new ConfigError([
    `KEEPER_API_KEY: required for the service at ${config.service.baseUrl} (or set service.apiKeyFile)`,
  ]);
}
