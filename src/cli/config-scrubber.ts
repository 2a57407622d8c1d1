import type { KeeperConfig } from "../config/load-config.js";
import { urlSecrets } from "../ops/secret-forms.js";
import { SecretScrubber } from "../ops/secret-scrubber.js";

/**
 * Defence in depth behind the logger's path redaction: every secret the config holds (the files'
 * contents, and the keys or passwords inside RPC and Redis URLs) is scrubbed from any line that
 * still carries one. Wallet keys are added when they are loaded.
 */
export function scrubberFor(config: Pick<KeeperConfig, "secrets" | "rpc" | "redis">): SecretScrubber {
  const { secrets } = config;
  const scrubber = new SecretScrubber(
    [secrets.apiKey, secrets.webhookUrl, secrets.adminToken, secrets.redisPassword].filter(
      (s): s is string => s !== undefined,
    ),
  );
  // RPC URLs often carry a provider's key in their path or query; a Redis URL may carry a password.
  for (const url of [config.rpc.url, ...config.rpc.sendUrls, config.redis.url]) scrubber.add(urlSecrets(url));
  return scrubber;
}
