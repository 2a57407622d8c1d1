import type { FastifyInstance, FastifyRequest } from "fastify";
import { isFromAnotherSite } from "../../ops/allowed-hosts.js";
import type { SandboxDriver } from "../drive/drive.js";
import { registerDriveRoutes } from "./drive-routes.js";
import { type FaultController, faultSettingsSchema } from "./faults.js";
import type { RateLimiter } from "./rate-limit.js";
import type { ResponseCheck } from "./response-check.js";
import { describeIssue } from "./validate.js";

export const ADMIN_PREFIX = "/__sandbox";

/** Loopback peers only: the admin routes change what every client of the sandbox sees. */
export function isLoopback(request: FastifyRequest): boolean {
  const address = request.socket.remoteAddress ?? "";
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

/** What the sandbox's check of its own answers has seen: counts, and the first violations word for word. */
function responseCheckStatus(check: ResponseCheck | undefined) {
  if (check === undefined) return { checking: false, validated: 0, violations: 0, recent: [] };
  return {
    checking: true,
    validated: check.validated,
    violations: check.violationCount,
    recent: check.violations,
  };
}

function takesBody(method: string): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH";
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/**
 * `GET|POST|DELETE /__sandbox/faults` read, replace and clear the fault knobs; `DELETE
 * /__sandbox/rate-limit` forgets counted requests; `GET /__sandbox/response-check` counts the answers
 * checked against `/openapi.json` and those that broke it; with a driver, the drive routes too (see
 * drive-routes.ts). No API key: they are for the operator of the sandbox, and answer only on loopback.
 */
export function registerAdminRoutes(
  app: FastifyInstance,
  faults: FaultController,
  rateLimiter: RateLimiter,
  driver?: SandboxDriver,
  responseCheck?: ResponseCheck,
): void {
  app.register(
    async (admin) => {
      admin.addHook("onRequest", async (request, reply) => {
        if (!isLoopback(request))
          return reply.code(403).send({ error: "admin routes answer on loopback only" });
        // A page of another site open in the operator's browser is on loopback too.
        if (isFromAnotherSite(request.headers))
          return reply.code(403).send({ error: "refused: a request from another site's page" });
        // A browser sends a JSON body to another origin only after asking (a preflight this server
        // never grants); a form or a body-less POST it sends without asking, so neither is taken.
        if (takesBody(request.method) && !isJson(request.headers["content-type"]))
          return reply.code(415).send({ error: "content-type: must be application/json" });
        return undefined;
      });
      admin.get("/faults", async () => faults.current());
      admin.post("/faults", async (request, reply) => {
        const parsed = faultSettingsSchema.safeParse(request.body ?? {}, { reportInput: true });
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          const { param, rule } = issue
            ? describeIssue(issue, "body")
            : { param: "body", rule: "is invalid" };
          return reply.code(400).send({ error: `${param}: ${rule}` });
        }
        faults.set(parsed.data);
        return faults.current();
      });
      admin.delete("/faults", async () => {
        faults.clear();
        return faults.current();
      });
      admin.delete("/rate-limit", async () => {
        rateLimiter.reset();
        return { reset: true };
      });
      admin.get("/response-check", async () => responseCheckStatus(responseCheck));
      if (driver !== undefined) registerDriveRoutes(admin, driver);
    },
    { prefix: ADMIN_PREFIX },
  );
}
