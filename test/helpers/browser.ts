import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Debian's chromium package: the browser tests drive it, nothing is downloaded. */
export const CHROMIUM_PATH = process.env.KEEPER_TEST_CHROMIUM ?? "/usr/bin/chromium";

/**
 * A headless Chromium with a fresh profile, through playwright-core. A missing browser is an error
 * naming the fix, never a skipped test.
 */
export async function launchChromium(
  options: { httpCredentials?: { username: string; password: string } } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `chromium is missing at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium; .ci/run does) or set KEEPER_TEST_CHROMIUM`,
    );
  const profile = await mkdtemp(join(tmpdir(), "keeper-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1400, height: 1000 },
    ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
