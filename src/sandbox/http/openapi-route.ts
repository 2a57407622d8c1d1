import type { FastifyInstance } from "fastify";
import type { OpenApiDocument } from "../../api/openapi.js";
import { isLoopback } from "./admin.js";

export const OPENAPI_PATH = "/openapi.json";

/**
 * `GET /openapi.json`: the description the sandbox answers by (generated from the endpoint table). No
 * API key, like the admin routes, and on loopback only like them.
 */
export function registerOpenApiRoute(app: FastifyInstance, document: OpenApiDocument): void {
  const json = JSON.stringify(document);
  app.get(OPENAPI_PATH, async (request, reply) => {
    if (!isLoopback(request)) return reply.code(403).send({ error: "openapi.json answers on loopback only" });
    return reply.type("application/json").send(json);
  });
}
