import { z } from "zod";
import { errorBodies } from "../core/schemas/common.js";
import { type EndpointDef, endpoints } from "./endpoints.js";
import { SHAPE_OF_AREA } from "./error-body.js";

/** A JSON Schema (2020-12) as zod writes it. */
export type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  readonly name: string;
  readonly in: "path" | "query";
  readonly required: boolean;
  readonly schema: JsonSchema;
}

export interface OpenApiResponse {
  readonly description: string;
  readonly content: { readonly "application/json": { readonly schema: JsonSchema } };
}

export interface OpenApiOperation {
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly "x-idempotent": boolean;
  readonly parameters?: readonly OpenApiParameter[];
  readonly requestBody?: {
    readonly required: boolean;
    readonly content: { readonly "application/json": { readonly schema: JsonSchema } };
  };
  readonly responses: { readonly "200": OpenApiResponse; readonly default: OpenApiResponse };
}

export type HttpMethodKey = "get" | "post" | "delete";

export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly jsonSchemaDialect: string;
  readonly components: { readonly securitySchemes: Record<string, Record<string, string>> };
  readonly security: readonly Record<string, readonly string[]>[];
  readonly paths: Readonly<Record<string, Partial<Record<HttpMethodKey, OpenApiOperation>>>>;
}

export const OPENAPI_VERSION = "3.1.1";
const DIALECT = "https://json-schema.org/draft/2020-12/schema";

/**
 * A bigint is accepted in process (a raw amount the caller holds exactly) and always travels as decimal
 * digits, so that is what the wire description says. Anything else without a JSON Schema equivalent is
 * refused, so a schema the document cannot describe fails here rather than being described as "anything".
 */
const BIGINT_ON_THE_WIRE: JsonSchema = { type: "string", pattern: "^-?\\d+$" };

/**
 * The JSON Schema of what travels over the wire for a zod schema. Both directions are the *input* of a
 * zod parse: the sandbox parses requests, the client parses responses. So `io: "input"` is the wire
 * form: before query strings become numbers, optional fields stay optional. Refinements (`.refine`,
 * `.superRefine`: cross-field rules, "must be positive" on integer strings) have no JSON Schema form and
 * are left out: the document holds every other rule, and is never stricter than zod.
 */
export function wireSchema(schema: z.ZodType, where: string): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: ({ zodSchema, message }) => {
      if (zodSchema._zod.def.type === "bigint") return BIGINT_ON_THE_WIRE;
      throw new Error(`${where}: ${message}; change the schema to one the document can describe`);
    },
  }) as JsonSchema;
  const { $schema: _dialect, ...rest } = json;
  // Embedded in the document, a "#/$defs/..." reference would resolve against the document's root.
  if ("$defs" in rest || JSON.stringify(rest).includes('"$ref"'))
    throw new Error(`${where}: a schema with references (recursive or shared by id) cannot be inlined`);
  return rest;
}

/** `/events/:eventId` as OpenAPI writes it: `/events/{eventId}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function pathParamNames(path: string): Set<string> {
  return new Set([...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? ""));
}

function asObjectSchema(
  def: EndpointDef,
  json: JsonSchema,
): { properties: Record<string, JsonSchema>; required: string[] } {
  if (json.type !== "object" || typeof json.properties !== "object" || json.properties === null)
    throw new Error(`${def.name}: params must be an object schema to become parameters`);
  return {
    properties: json.properties as Record<string, JsonSchema>,
    required: Array.isArray(json.required) ? (json.required as string[]) : [],
  };
}

function parametersOf(def: EndpointDef): OpenApiParameter[] {
  const inPath = pathParamNames(def.path);
  const { properties, required } =
    def.params === undefined
      ? { properties: {}, required: [] }
      : asObjectSchema(def, wireSchema(def.params, `${def.name} params`));
  for (const name of inPath)
    if (!(name in properties)) throw new Error(`${def.name}: path parameter ${name} is not in params`);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: inPath.has(name) ? "path" : "query",
    required: inPath.has(name) || required.includes(name),
    schema,
  }));
}

function errorSchemaOf(def: EndpointDef): JsonSchema {
  return wireSchema(errorBodies[SHAPE_OF_AREA[def.area]], `${def.area} error body`);
}

function operationOf(def: EndpointDef): OpenApiOperation {
  const parameters = parametersOf(def);
  return {
    operationId: def.name,
    tags: [def.area],
    // Safe to repeat after a network error (endpoints.ts): a client retries only these.
    "x-idempotent": def.idempotent,
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(def.body === undefined
      ? {}
      : {
          requestBody: {
            required: !def.body.safeParse(undefined).success,
            content: { "application/json": { schema: wireSchema(def.body, `${def.name} body`) } },
          },
        }),
    responses: {
      "200": {
        description: "Success",
        content: { "application/json": { schema: wireSchema(def.response, `${def.name} response`) } },
      },
      default: {
        description: `Error, in the ${def.area} area's shape (a 4xx or 5xx status)`,
        content: { "application/json": { schema: errorSchemaOf(def) } },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 description of the service, built from the endpoint table and its zod schemas: a
 * change to either shows up here without an edit. Every request needs the `x-api-key` header.
 */
export function buildOpenApiDocument(
  table: Readonly<Record<string, EndpointDef>> = endpoints,
): OpenApiDocument {
  const paths: Record<string, Partial<Record<HttpMethodKey, OpenApiOperation>>> = {};
  for (const def of Object.values(table)) {
    const path = openApiPath(def.path);
    const method = def.method.toLowerCase() as HttpMethodKey;
    const item = paths[path] ?? {};
    paths[path] = item;
    if (item[method] !== undefined) throw new Error(`${def.name}: ${def.method} ${def.path} is listed twice`);
    item[method] = operationOf(def);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "Prediction-market and trading service, as Keeper and its sandbox speak it",
      version: "1",
      description:
        "Generated from Keeper's endpoint table (src/api/endpoints.ts) and its zod schemas. Rules zod " +
        "checks in code (cross-field rules, refinements) are not in the schemas.",
    },
    jsonSchemaDialect: DIALECT,
    components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } } },
    security: [{ apiKey: [] }],
    paths,
  };
}
