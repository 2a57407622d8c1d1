import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import bs58 from "bs58";

export interface DroppingNode {
  url: string;
  /** While on, every transaction sent for the first time is lost, and stays lost on every rebroadcast. */
  dropNew: boolean;
  /** Signatures of the transactions lost so far. */
  lost(): ReadonlySet<string>;
  close(): Promise<void>;
}

/**
 * A node on a congested network: a loopback proxy in front of the local chain's RPC server, outside
 * Keeper's code. While `dropNew` is on, a transaction it has not seen before is acknowledged (its
 * signature answered) and never forwarded, on every send: it can only expire. Transactions first
 * seen while it is off reach the chain. Everything else is forwarded unchanged.
 */
export async function startDroppingNode(target: string): Promise<DroppingNode> {
  const lost = new Set<string>();
  const body = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };
  const node: DroppingNode = {
    url: "",
    dropNew: false,
    lost: () => lost,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    void body(request)
      .then(async (text) => {
        // A batch is forwarded whole: web3.js never batches a send.
        const call = JSON.parse(text) as { id?: unknown; method?: string; params?: unknown[] };
        response.setHeader("content-type", "application/json");
        if (call.method === "sendTransaction") {
          const signature = firstSignature(call.params);
          if (lost.has(signature) || node.dropNew) {
            lost.add(signature);
            response.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: signature }));
            return;
          }
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
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return node;
}

/** The transaction's first signature (the fee payer's): its id on the chain. */
function firstSignature(params: unknown[] | undefined): string {
  const [wire, options] = (params ?? []) as [string, { encoding?: string } | undefined];
  const bytes = options?.encoding === "base64" ? Buffer.from(wire, "base64") : Buffer.from(bs58.decode(wire));
  // A short vector length (one byte for fewer than 128 signatures), then 64 bytes a signature.
  return bs58.encode(bytes.subarray(1, 65));
}
