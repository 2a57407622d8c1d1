import { type EndpointName, endpoints } from "../../../src/api/endpoints.js";
import { ResponseCheck } from "../../../src/sandbox/http/response-check.js";
import {
  buildSandboxServer,
  type EndpointHandlers,
  type SandboxServer,
  type SandboxServerOptions,
} from "../../../src/sandbox/server.js";
import { tallyCheckedResponses } from "../../helpers/checked-sandbox.js";

export const KEY = "test-key";
/** Valid base58 public keys, 32 and 43/44 characters. */
export const PK = "11111111111111111111111111111111";
export const MINT_A = "So11111111111111111111111111111111111111112";
export const MINT_B = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/**
 * Handlers that echo what they were given: the HTTP layer is tested on its own, with the handler
 * contract as its boundary (the smoke test runs the real world).
 */
export function echoHandlers(overrides: Partial<EndpointHandlers> = {}): EndpointHandlers {
  const echo = Object.fromEntries(
    (Object.keys(endpoints) as EndpointName[]).map((name) => [
      name,
      (input: { params: unknown; body: unknown }) => ({ endpoint: name, ...input }),
    ]),
  );
  return { ...echo, ...overrides } as EndpointHandlers;
}

export interface RunningServer {
  readonly server: SandboxServer;
  readonly url: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  send(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The HTTP layer on echo handlers. Its error answers are the sandbox's own, so they are checked against
 * /openapi.json (the echoed successes are not the service's bodies); `close()` throws on a mismatch.
 */
export async function startTestServer(options: Partial<SandboxServerOptions> = {}): Promise<RunningServer> {
  const responseCheck = options.responseCheck ?? new ResponseCheck({ errorsOnly: true });
  const server = buildSandboxServer({ handlers: echoHandlers(), apiKeys: [KEY], responseCheck, ...options });
  const url = await server.listen({ port: 0, host: "127.0.0.1" });
  return {
    server,
    url,
    get: (path, headers = { "x-api-key": KEY }) => fetch(`${url}${path}`, { headers }),
    send: (method, path, body, headers = { "x-api-key": KEY }) =>
      fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    async close() {
      await server.close();
      tallyCheckedResponses(responseCheck);
      responseCheck.assertNoViolations();
    },
  };
}
