import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RefusingNode {
  url: string;
  refusedSends(): number;
  close(): Promise<void>;
}

/**
 * A node that answers reads but refuses every sendTransaction (a congested or rate-limiting
 * provider): a loopback proxy in front of the local chain's RPC server, outside Keeper's code.
 */
export async function startRefusingNode(target: string): Promise<RefusingNode> {
  let refused = 0;
  const body = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };
  const server: Server = createServer((request, response) => {
    void body(request)
      .then(async (text) => {
        // A batch is forwarded whole: web3.js never batches a send.
        const call = JSON.parse(text) as { id?: unknown; method?: string };
        response.setHeader("content-type", "application/json");
        if (call.method === "sendTransaction") {
          refused += 1;
          response.end(
            JSON.stringify({ jsonrpc: "2.0", id: call.id, error: { code: -32005, message: "node is busy" } }),
          );
          return;
        }
        const answer = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: text,
        });
        response.end(await answer.text());
      })
      .catch(() => {
        response.statusCode = 502;
        response.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refusedSends: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
