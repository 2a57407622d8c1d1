import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type EndpointDef, endpoints } from "../../../src/api/endpoints.js";
import {
  buildOpenApiDocument,
  type HttpMethodKey,
  type JsonSchema,
  type OpenApiOperation,
  openApiPath,
} from "../../../src/api/openapi.js";
import { swapBuildParams } from "../../../src/core/schemas/swap.js";
import { createSchemaValidator } from "../../../src/sandbox/http/response-check.js";

const document = buildOpenApiDocument();
const defs = Object.values(endpoints) as EndpointDef[];

function operations(doc = document): [string, HttpMethodKey, OpenApiOperation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [path, method as HttpMethodKey, op] as const),
  ) as [string, HttpMethodKey, OpenApiOperation][];
}

function operationOf(def: EndpointDef, doc = document): OpenApiOperation | undefined {
  return doc.paths[openApiPath(def.path)]?.[def.method.toLowerCase() as HttpMethodKey];
}

/** Every JSON Schema the document holds, with where it is. */
function schemasOf(doc = document): [string, JsonSchema][] {
  return operations(doc).flatMap(([path, method, op]) => [
    ...(op.parameters ?? []).map(
      (p) => [`${method} ${path} ${p.in} ${p.name}`, p.schema] as [string, JsonSchema],
    ),
    ...(op.requestBody === undefined
      ? []
      : [
          [`${method} ${path} body`, op.requestBody.content["application/json"].schema] as [
            string,
            JsonSchema,
          ],
        ]),
    ...Object.entries(op.responses).map(
      ([status, r]) =>
        [`${method} ${path} ${status}`, r.content["application/json"].schema] as [string, JsonSchema],
    ),
  ]);
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with the API key as its security scheme", () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).not.toBe("");
    expect(document.info.version).not.toBe("");
    expect(document.components.securitySchemes.apiKey).toEqual({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
    });
    expect(document.security).toEqual([{ apiKey: [] }]);
  });

  it.each(defs.map((d) => [d.name, d] as const))("describes %s at its path and method", (name, def) => {
    const op = operationOf(def);
    expect(op?.operationId).toBe(name);
    expect(op?.tags).toEqual([def.area]);
    expect(op?.["x-idempotent"]).toBe(def.idempotent);
  });

  it("has no operation that is not in the endpoint table, and unique operation ids", () => {
    const ids = operations().map(([, , op]) => op.operationId);
    expect(ids.sort()).toEqual(defs.map((d) => d.name).sort());
  });

  it.each(operations().map(([path, method, op]) => [`${method} ${path}`, path, op] as const))(
    "%s has a JSON success and a JSON error response, and every path parameter",
    (_label, path, op) => {
      expect(op.responses["200"].content["application/json"].schema).toBeTypeOf("object");
      expect(op.responses.default.content["application/json"].schema).toBeTypeOf("object");
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const inPath = (op.parameters ?? []).filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name).sort()).toEqual(templated.sort());
      for (const p of inPath) expect(p.required).toBe(true);
    },
  );

  it("turns every params key into one parameter, path or query, required as zod requires it", () => {
    const op = operationOf(endpoints.listEventMarkets);
    expect(op?.parameters?.map((p) => [p.name, p.in, p.required])).toEqual([
      ["eventId", "path", true],
      ["start", "query", false],
      ["end", "query", false],
    ]);
    const search = operationOf(endpoints.searchEvents);
    expect(search?.parameters?.find((p) => p.name === "query")?.required).toBe(true);
    expect(operationOf(endpoints.createTriggerOrder)?.requestBody?.required).toBe(true);
  });

  it("describes the wire: query integers as digits, bigint amounts as decimal strings, errors per area", () => {
    const validator = createSchemaValidator();
    const swap = operationOf(endpoints.buildSwap);
    const amount = swap?.parameters?.find((p) => p.name === "amount")?.schema ?? {};
    expect(validator.validate(amount, "123456789012345678901234567890")).toBe(true);
    expect(validator.validate(amount, "1.5")).toBe(false);
    const slippage = swap?.parameters?.find((p) => p.name === "slippageBps")?.schema ?? {};
    expect(validator.validate(slippage, "50")).toBe(true);
    // The client's own side of the same schema takes the bigint the wire carries as digits.
    expect(swapBuildParams.shape.amount.safeParse(123n).success).toBe(true);

    const errorOf = (def: EndpointDef) =>
      operationOf(def)?.responses.default.content["application/json"].schema;
    expect(errorOf(endpoints.getEvent)?.required).toEqual(["type", "message", "request_id"]);
    expect(errorOf(endpoints.executeTrigger)?.required).toEqual(["error", "code"]);
    expect(errorOf(endpoints.createRecurringOrder)?.required).toEqual(["code", "error", "status"]);
    expect(errorOf(endpoints.buildSwap)?.required).toEqual(["error"]);
  });

  it.each(schemasOf().map(([where, schema]) => [where, schema] as const))(
    "%s is a valid JSON Schema 2020-12 (strict)",
    (_where, schema) => {
      expect(() => createSchemaValidator().compile(schema)).not.toThrow();
    },
  );

  it("picks up a new endpoint and a changed schema from the table by itself", () => {
    const table = {
      ...endpoints,
      getMarket: { ...endpoints.getMarket, response: z.looseObject({ marketId: z.string().nullable() }) },
      listWidgets: {
        name: "listWidgets",
        area: "trigger",
        method: "GET",
        path: "/trigger/v1/widgets/:owner",
        params: z.strictObject({ owner: z.string(), page: z.number().int().optional() }),
        response: z.looseObject({
          widgets: z.array(z.looseObject({ id: z.string() })),
          hasMore: z.boolean(),
        }),
        idempotent: true,
      },
    } satisfies Record<string, EndpointDef>;
    const doc = buildOpenApiDocument(table);
    const op = doc.paths["/trigger/v1/widgets/{owner}"]?.get;
    expect(op?.operationId).toBe("listWidgets");
    expect(op?.parameters?.map((p) => [p.name, p.in])).toEqual([
      ["owner", "path"],
      ["page", "query"],
    ]);
    expect(op?.responses["200"].content["application/json"].schema.required).toEqual(["widgets", "hasMore"]);
    expect(operations(doc)).toHaveLength(operations().length + 1);
    const market = doc.paths["/prediction/v1/markets/{marketId}"]?.get?.responses["200"];
    expect(market?.content["application/json"].schema.properties).toEqual({
      marketId: { type: ["string", "null"] },
    });
  });

  it("refuses a schema it cannot describe, naming the endpoint and the part", () => {
    const table = { getEvent: { ...endpoints.getEvent, response: z.looseObject({ at: z.date() }) } };
    expect(() => buildOpenApiDocument(table)).toThrow(/getEvent response: Date cannot be represented/);
  });

  it("refuses a path parameter the params schema does not hold", () => {
    const table = { getEvent: { ...endpoints.getEvent, params: z.strictObject({ other: z.string() }) } };
    expect(() => buildOpenApiDocument(table)).toThrow("getEvent: path parameter eventId is not in params");
  });
});
