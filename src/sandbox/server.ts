import { randomUUID } from "node:crypto";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { z } from "zod";
import { type EndpointDef, type EndpointName, endpoints } from "../api/endpoints.js";
import { buildOpenApiDocument } from "../api/openapi.js";
import { HostAllowList } from "../ops/allowed-hosts.js";
import type { SandboxDriver } from "./drive/drive.js";
import { ADMIN_PREFIX, registerAdminRoutes } from "./http/admin.js";
import { API_KEY_HEADER, type ApiKeySpec, authenticate, buildKeyTable } from "./http/auth.js";
import { corruptBody } from "./http/body-faults.js";
import { areaOfUrl, type ErrorArea, errorBody, HttpProblem } from "./http/errors.js";
import { FaultController, type FaultSettings } from "./http/faults.js";
import { toJson } from "./http/json.js";
import { registerOpenApiRoute } from "./http/openapi-route.js";
import { RateLimiter, type RateLimitPlan, rateLimitHeaders } from "./http/rate-limit.js";
import type { ResponseCheck } from "./http/response-check.js";
import { toHttpProblem } from "./http/to-problem.js";
import { parseInput, withoutUnknownParams } from "./http/validate.js";

type Output<S> = S extends z.ZodType ? z.output<S> : undefined;
type Def<N extends EndpointName> = (typeof endpoints)[N];

/** What a handler receives: path and query parameters parsed together, and the parsed JSON body. */
export interface HandlerInput<N extends EndpointName> {
  readonly params: Def<N> extends { params: infer P } ? Output<P> : undefined;
  readonly body: Def<N> extends { body: infer B } ? Output<B> : undefined;
}

/** One handler per endpoint; this is the boundary between HTTP and the simulated world. */
export type EndpointHandlers = {
  readonly [N in EndpointName]: (input: HandlerInput<N>) => unknown;
};

export interface SandboxServerOptions {
  readonly handlers: EndpointHandlers;
  /** Accepted keys; a key with its own `rateLimit` runs on that plan instead of the default one. */
  readonly apiKeys: readonly (string | ApiKeySpec)[];
  /** The plan of keys without their own; `false` or absent: no limit. */
  readonly rateLimit?: RateLimitPlan | false;
  /** Initial fault settings, or a controller to share. */
  readonly faults?: FaultSettings | FaultController;
  readonly logger?: FastifyBaseLogger;
  /** Wall clock of the rate limiter, in ms; tests pass their own to move windows without waiting. */
  readonly nowMs?: () => number;
  /** Checks every response of a described route against the OpenAPI document (tests pass one). */
  readonly responseCheck?: ResponseCheck;
  /** The world's levers for the loopback drive routes (`/__sandbox/markets/...`); none: no such routes. */
  readonly driver?: SandboxDriver;
  /** The address the server listens on: a Host naming it is answered (with loopback names and IPs). */
  readonly boundHost?: string;
  /** More Host names to answer (`keeper sandbox --allowed-host`); any other Host gets 421. */
  readonly allowedHosts?: readonly string[];
  /** Told of every answered request to the service's own routes (a benchmark's count of requests). */
  readonly onServed?: (served: ServedRequest) => void;
}

/** One request to the service as the sandbox answered it. */
export interface ServedRequest {
  /** Epoch ms when it arrived. */
  readonly receivedAtMs: number;
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  /** The parsed JSON body; undefined when there was none or the request was refused before reading it (a 429). */
  readonly body: unknown;
  readonly status: number;
}

export type SandboxServer = FastifyInstance & {
  /** The fault knobs, settable while the server runs. */
  readonly faults: FaultController;
  readonly rateLimiter: RateLimiter;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function sendProblem(reply: FastifyReply, area: ErrorArea, problem: HttpProblem): FastifyReply {
  return reply
    .code(problem.status)
    .type("application/json")
    .send(toJson(errorBody(area, problem, String(reply.request.id))));
}

/**
 * The sandbox service's HTTP layer: every endpoint of the table with its parameter rules, `x-api-key`
 * auth, a per-key sliding-window rate limit, fault knobs, and errors in each area's own shape.
 */
export function buildSandboxServer(options: SandboxServerOptions): SandboxServer {
  const keyTable = buildKeyTable(options.apiKeys, options.rateLimit);
  const nowMs = options.nowMs ?? Date.now;
  const rateLimiter = new RateLimiter(keyTable.plans, nowMs);
  const faults =
    options.faults instanceof FaultController ? options.faults : new FaultController(options.faults);

  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    // Ids are ours to give: a client-chosen id would let two requests share one.
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Long ids and keys must reach validation, not become a 404.
    routerOptions: { maxParamLength: 2048 },
  });

  const hosts = new HostAllowList({
    ...(options.boundHost === undefined ? {} : { boundHost: options.boundHost }),
    names: options.allowedHosts ?? [],
  });
  const onServed = options.onServed;
  if (onServed)
    app.addHook("onResponse", async (request, reply) => {
      if (request.url.startsWith(ADMIN_PREFIX)) return;
      onServed({
        receivedAtMs: Date.now() - reply.elapsedTime,
        method: request.method,
        url: request.url,
        body: request.body,
        status: reply.statusCode,
      });
    });
  app.addHook("onRequest", async (request, reply) => {
    // The live gateway's header, and the spec's.
    reply.header("x-api-gateway-request-id", request.id);
    reply.header("x-request-id", request.id);
    // Before the key, the rate limit and the fault knobs: a page whose name was rebound to this
    // machine reads nothing, changes nothing and uses up nothing.
    if (!hosts.allows(request.headers.host))
      return sendProblem(
        reply,
        areaOfUrl(request.url),
        new HttpProblem(421, "misdirected_request", "is not a name this sandbox answers to", "Host"),
      );
    return undefined;
  });

  // Bodies a fault knob broke on purpose are not the sandbox drifting from the document.
  const brokenOnPurpose = new WeakSet<FastifyRequest>();
  const check = options.responseCheck;
  if (check !== undefined)
    app.addHook("onSend", async (request, reply, payload) => {
      const route = request.routeOptions.url;
      if (route !== undefined && !brokenOnPurpose.has(request) && typeof payload === "string")
        check.check(request.method, route, reply.statusCode, payload);
      return payload;
    });

  const guard = requestGuard(keyTable, faults, rateLimiter, nowMs, true);
  // Prediction execute calls use no rate-limit credits (api-live): the key is still checked.
  const uncountedGuard = requestGuard(keyTable, faults, rateLimiter, nowMs, false);

  for (const [name, def] of Object.entries(endpoints) as [EndpointName, EndpointDef][]) {
    const handle = options.handlers[name] as (input: { params: unknown; body: unknown }) => unknown;
    app.route({
      method: def.method,
      url: def.path,
      onRequest: def.uncounted === true ? uncountedGuard : guard,
      handler: async (request, reply) => {
        const plan = faults.planFor(name);
        if (plan.latencyMs > 0) await sleep(plan.latencyMs);
        if (plan.failStatus !== undefined)
          throw new HttpProblem(plan.failStatus, "injected_fault", "sandbox fault: injected server error");
        const params =
          def.params === undefined
            ? undefined
            : parseInput(
                def.params,
                withoutUnknownParams(def.params, {
                  ...(request.query as object),
                  ...(request.params as object),
                }),
                "query",
              );
        const body = def.body === undefined ? undefined : parseInput(def.body, request.body, "body");
        const result = await handle({ params, body });
        const json = toJson(result);
        if (plan.bodyFault !== undefined) brokenOnPurpose.add(request);
        const payload =
          plan.bodyFault === undefined ? json : corruptBody(plan.bodyFault, result, json, def.response);
        return reply.code(200).type("application/json").send(payload);
      },
    });
  }

  registerAdminRoutes(app, faults, rateLimiter, options.driver, check);
  registerOpenApiRoute(app, check?.document ?? buildOpenApiDocument());

  app.setErrorHandler((error, request, reply) => {
    const problem = toHttpProblem(error);
    if (problem.status >= 500 && problem.code === "internal_error")
      request.log.error({ err: error }, "sandbox handler failed");
    return sendProblem(reply, areaOfUrl(request.url), problem);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? request.url;
    return sendProblem(
      reply,
      areaOfUrl(request.url),
      new HttpProblem(404, "not_found", `no endpoint ${request.method} ${path}`),
    );
  });

  return Object.assign(app, { faults, rateLimiter });
}

/**
 * The key and the rate limit, checked before the body is read, so an unauthenticated or limited
 * request is refused before any work.
 */
function requestGuard(
  keyTable: ReturnType<typeof buildKeyTable>,
  faults: FaultController,
  rateLimiter: RateLimiter,
  nowMs: () => number,
  counted: boolean,
) {
  return async function guard(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> {
    const area = areaOfUrl(request.url);
    let key: string;
    try {
      key = authenticate(keyTable, request.headers[API_KEY_HEADER]);
    } catch (error) {
      return sendProblem(reply, area, toHttpProblem(error));
    }
    if (!counted) return undefined;
    // A burst stands for the upstream's limiter kicking in: it refuses without using up the key's window.
    const burst = faults.takeBurst();
    if (burst !== undefined) {
      const retryAfter = burst.retryAfterSeconds;
      reply.headers({
        "x-ratelimit-remaining": "0",
        "x-ratelimit-current": String(rateLimiter.limitOf(key) ?? 1),
        "x-ratelimit-reset": String(Math.ceil(nowMs() / 1000) + (retryAfter ?? 1)),
        ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) }),
      });
      return sendProblem(
        reply,
        area,
        new HttpProblem(429, "rate_limited", "rate limit exceeded (sandbox burst)"),
      );
    }
    const decision = rateLimiter.take(key);
    if (decision === undefined) return undefined;
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed)
      return sendProblem(
        reply,
        area,
        new HttpProblem(429, "rate_limited", "rate limit exceeded for this API key"),
      );
    return undefined;
  };
}
