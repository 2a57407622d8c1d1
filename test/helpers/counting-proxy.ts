import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the service received through the proxy. */
export interface SeenRequest {
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  readonly query: URLSearchParams;
}

/**
 * A loopback HTTP proxy in front of the sandbox service that writes down every request it forwards,
 * so a test counts what the service received, per route, without touching the keeper's client.
 */
export async function startCountingProxy(targetUrl: string): Promise<{
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}> {
  const target = new URL(targetUrl);
  const agent = new Agent({ keepAlive: true });
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", target);
    seen.push({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams });
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
