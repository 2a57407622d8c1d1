import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

/**
 * A redis-server of the test's own that requires `password` (the shared one at 6379 has none), in
 * memory only, with the eviction policy Keeper requires. Its password file is written mode 0600, as a
 * secret file must be.
 */
export async function startPasswordRedis(password: string) {
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--bind",
      "127.0.0.1",
      "--port",
      String(port),
      "--requirepass",
      password,
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "noeviction",
      "--daemonize",
      "no",
    ],
    { stdio: "ignore" },
  );
  const dir = await mkdtemp(join(tmpdir(), "keeper-redis-password-"));
  const passwordFile = join(dir, "redis-password");
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  const url = `redis://127.0.0.1:${port}`;
  await waitForPong(url, password);
  return {
    url,
    port,
    passwordFile,
    dir,
    async stop() {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPong(url: string, password: string): Promise<void> {
  for (let i = 0; i < 50; i += 1) {
    const redis = new Redis(url, { password, lazyConnect: true, retryStrategy: () => null });
    redis.on("error", () => undefined);
    try {
      await redis.connect();
      if ((await redis.ping()) === "PONG") return;
    } catch {
      // not up yet
    } finally {
      redis.disconnect();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server with a password did not answer at ${url}`);
}
