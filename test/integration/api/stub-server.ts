import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";

/** One request as the stub saw it, stamped when it arrived (server side, not the test's wall time). */
export interface Arrival {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** `performance.now()` at arrival: monotonic, for gaps. */
  readonly atMs: number;
  /** `Date.now()` at arrival: for comparing with Unix-second headers. */
  readonly wallMs: number;
}

export type StubHandler = (request: FastifyRequest, reply: FastifyReply, arrival: Arrival) => unknown;

/**
 * A bare HTTP server for transport mechanics only (retries, timeouts, headers, bodies): each test
 * decides every answer. The service's behaviour is the sandbox's business, not this stub's.
 */
export async function startStub(handler: StubHandler) {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  const arrivals: Arrival[] = [];
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    try {
      done(null, body === "" ? undefined : JSON.parse(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.all("/*", async (request, reply) => {
    const arrival: Arrival = {
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: request.body,
      atMs: performance.now(),
      wallMs: Date.now(),
    };
    arrivals.push(arrival);
    return handler(request, reply, arrival);
  });
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    url: address,
    arrivals,
    close: () => app.close(),
  };
}

export const json = (
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) =>
  reply
    .code(status)
    .headers({ "content-type": "application/json", ...headers })
    .send(typeof body === "string" ? body : JSON.stringify(body));

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
