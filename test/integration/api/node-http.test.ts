import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES, NoAnswerError, sendOverNodeHttp } from "../../../src/api/node-http.js";

// The transport's sender against a bare node:http server, whose connections and bytes the test decides.

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(listener: RequestListener) {
  const server = createServer(listener);
  servers.push(server);
  let connections = 0;
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/prediction/v1/markets`),
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const call = (extra: Partial<Parameters<typeof sendOverNodeHttp>[1]> = {}) => ({
  method: "GET",
  headers: { accept: "application/json" },
  redirect: "manual" as const,
  signal: AbortSignal.timeout(5_000),
  ...extra,
});

describe("sendOverNodeHttp", () => {
  it("keeps one connection for requests in a row, and sends the body with its length", async () => {
    const bodies: string[] = [];
    const { url, connections } = await serve((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        bodies.push(`${request.method} ${request.headers["content-length"] ?? "-"} ${body}`);
        response.end(JSON.stringify({ n: bodies.length }));
      });
    });
    for (let i = 0; i < 5; i++) {
      const answer = await sendOverNodeHttp(url, call({ method: "POST", body: `{"é":${i}}` }));
      expect(JSON.parse(await answer.text())).toEqual({ n: i + 1 });
    }
    // Eight bytes in seven characters: the length counts bytes.
    expect(bodies[0]).toBe('POST 8 {"é":0}');
    expect(connections()).toBe(1);
  });

  it("does not keep a connection the service says it closes within a second (Keep-Alive: timeout=1)", async () => {
    const { url, connections } = await serve((_request, response) => {
      response.setHeader("keep-alive", "timeout=1");
      response.end("{}");
    });
    for (let i = 0; i < 3; i++) await (await sendOverNodeHttp(url, call())).text();
    expect(connections()).toBe(3);
  });

  it("answers the status, its text, headers by any case (repeated ones joined) and the body without a BOM", async () => {
    const { url } = await serve((_request, response) => {
      response.writeHead(418, "Short And Stout", [
        ["X-Request-Id", "req-1"],
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
      ]);
      response.end('\ufeff{"ok":true}');
    });
    const answer = await sendOverNodeHttp(url, call());
    expect(answer.status).toBe(418);
    expect(answer.statusText).toBe("Short And Stout");
    expect(answer.headers.get("x-request-id")).toBe("req-1");
    expect(answer.headers.get("X-REQUEST-ID")).toBe("req-1");
    expect(answer.headers.get("set-cookie")).toBe("a=1, b=2");
    expect(answer.headers.get("retry-after")).toBeNull();
    expect(JSON.parse(await answer.text())).toEqual({ ok: true });
  });

  it("fails the body, not the status line, when the connection drops halfway", async () => {
    const { url } = await serve((_request, response) => {
      response.writeHead(200, { "content-length": "100" });
      response.write('{"half":');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const answer = await sendOverNodeHttp(url, call());
    expect(answer.status).toBe(200);
    await expect(answer.text()).rejects.toBeInstanceOf(NoAnswerError);
  });

  it("cuts off an answer larger than the limit", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const { url } = await serve((_request, response) => {
      const write = (left: number): void => {
        if (left === 0 || response.destroyed) return void response.end();
        if (response.write(chunk)) write(left - 1);
        else response.once("drain", () => write(left - 1));
      };
      write(MAX_ANSWER_BYTES / chunk.length + 4);
    });
    const answer = await sendOverNodeHttp(url, call());
    const failure = await answer.text().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect(((failure as Error).cause as Error).message).toBe(
      `the answer is larger than ${MAX_ANSWER_BYTES} bytes`,
    );
  });

  it("asks for compressed answers and reads gzip, deflate and br, each to the same JSON", async () => {
    const json = JSON.stringify({ data: Array.from({ length: 50 }, (_, i) => ({ pubkey: `p${i}` })) });
    const encoders: Record<string, (bytes: Buffer) => Buffer> = {
      gzip: gzipSync,
      deflate: deflateSync,
      br: brotliCompressSync,
      identity: (bytes) => bytes,
    };
    const asked: string[] = [];
    const { url } = await serve((request, response) => {
      asked.push(String(request.headers["accept-encoding"]));
      const coding = String(request.headers["x-coding"]);
      response.writeHead(200, { "content-encoding": coding });
      response.end(encoders[coding]?.(Buffer.from(json)));
    });
    for (const coding of Object.keys(encoders)) {
      const answer = await sendOverNodeHttp(url, call({ headers: { "x-coding": coding } }));
      expect(await answer.text(), coding).toBe(json);
    }
    expect(new Set(asked)).toEqual(new Set(["gzip, deflate, br"]));
  });

  it("refuses a coding it cannot read by name, and corrupt compressed bytes, as no answer", async () => {
    const { url } = await serve((request, response) => {
      const coding = String(request.headers["x-coding"]);
      response.writeHead(200, { "content-encoding": coding });
      response.end(coding === "gzip" ? Buffer.from("not gzip at all") : "{}");
    });
    const unknown = await (await sendOverNodeHttp(url, call({ headers: { "x-coding": "zstd" } })))
      .text()
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(NoAnswerError);
    expect((unknown as Error).message).toContain('Content-Encoding "zstd" is not one Keeper reads');
    const corrupt = await (await sendOverNodeHttp(url, call({ headers: { "x-coding": "gzip" } })))
      .text()
      .catch((error: unknown) => error);
    expect(corrupt).toBeInstanceOf(NoAnswerError);
    expect(((corrupt as Error).cause as NodeJS.ErrnoException).code).toBe("Z_DATA_ERROR");
  });

  it("reads an empty body sent with a coding header as empty, with its status and headers", async () => {
    const { url } = await serve((request, response) => {
      response.writeHead(429, {
        "content-encoding": String(request.headers["x-coding"]),
        "retry-after": "7",
      });
      response.end();
    });
    for (const coding of ["gzip", "deflate", "br"]) {
      const answer = await sendOverNodeHttp(url, call({ headers: { "x-coding": coding } }));
      expect([answer.status, answer.headers.get("retry-after")]).toEqual([429, "7"]);
      expect(await answer.text(), coding).toBe("");
    }
  });

  it("cuts off a small compressed answer that unpacks past the limit", async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_ANSWER_BYTES + 1024 * 1024, 0x20));
    const { url } = await serve((_request, response) => {
      response.writeHead(200, { "content-encoding": "gzip" });
      response.end(bomb);
    });
    const failure = await (await sendOverNodeHttp(url, call())).text().catch((error: unknown) => error);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect((failure as Error).message).toContain(`larger than ${MAX_ANSWER_BYTES} bytes`);
  });

  it("gives Node's error code as the cause when nothing listens, and stops when the caller aborts", async () => {
    const { url: refused, close } = await serve(() => undefined);
    await close();
    const failure = await sendOverNodeHttp(refused, call()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect(((failure as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");

    const { url: silent } = await serve(() => undefined);
    const controller = new AbortController();
    const pending = sendOverNodeHttp(silent, call({ signal: controller.signal }));
    controller.abort();
    const aborted = await pending.catch((error: unknown) => error);
    expect(((aborted as Error).cause as Error).name).toBe("AbortError");

    // An answer that starts and never ends: the caller's signal ends the body's wait too.
    const { url: trickling } = await serve((_request, response) => {
      response.writeHead(200, { "content-length": "1000" });
      response.write("{");
    });
    const bodyController = new AbortController();
    const answer = await sendOverNodeHttp(trickling, call({ signal: bodyController.signal }));
    bodyController.abort();
    await expect(answer.text()).rejects.toBeInstanceOf(NoAnswerError);
  });
});
