import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  buildOpenApiDocument,
  type HttpMethodKey,
  type OpenApiDocument,
  openApiPath,
} from "../../api/openapi.js";

/** Kept word for word; beyond it only the count grows (one broken handler answers many requests). */
const MAX_KEPT_VIOLATIONS = 50;

/** A JSON Schema validator for the document's schemas: 2020-12, strict, with the formats zod writes. */
export function createSchemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  // Under NodeNext the CommonJS plugin's own `default` export is the callable one.
  addFormats.default(ajv);
  return ajv;
}

/** One response that did not match the document, as it is logged. */
export interface ResponseViolation {
  readonly operation: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  /** The first rule the body broke (`body/pricing/buyYesPriceUsd must be number,null`). */
  readonly error: string;
}

export class ResponseViolationsError extends Error {
  override readonly name = "ResponseViolationsError";
  constructor(count: number, kept: readonly string[]) {
    super(
      `${count} sandbox response(s) did not match /openapi.json:\n${kept.join("\n")}${
        count > kept.length ? `\n... and ${count - kept.length} more` : ""
      }`,
    );
  }
}

/**
 * Checks each response of the sandbox against the OpenAPI document: the 200 schema for a success, the
 * area's error schema otherwise. Routes the document does not describe (admin, not found) are not
 * counted. Violations are collected, not thrown, so the response still goes out and the test that
 * owns the sandbox fails at the end with all of them.
 */
export class ResponseCheck {
  readonly #ajv = createSchemaValidator();
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #kept: string[] = [];
  readonly #byOperation = new Map<string, number>();
  #validated = 0;
  #violations = 0;

  readonly document: OpenApiDocument;
  readonly #errorsOnly: boolean;
  readonly #onViolation: ((violation: ResponseViolation) => void) | undefined;

  /**
   * `errorsOnly` checks error answers alone: for servers whose handlers are stand-ins (tests of the
   * HTTP layer echo their input), where only the error bodies are the sandbox's own.
   */
  constructor(
    options: {
      document?: OpenApiDocument;
      errorsOnly?: boolean;
      /** Told of each violation as it happens (a sandbox logs it); the check counts it either way. */
      onViolation?: (violation: ResponseViolation) => void;
    } = {},
  ) {
    this.document = options.document ?? buildOpenApiDocument();
    this.#errorsOnly = options.errorsOnly ?? false;
    this.#onViolation = options.onViolation;
  }

  /** Responses checked so far. */
  get validated(): number {
    return this.#validated;
  }

  /** How many of them did not match; the first few are kept in `violations`. */
  get violationCount(): number {
    return this.#violations;
  }

  get violations(): readonly string[] {
    return this.#kept;
  }

  /** Responses checked per operation and kind (`getMarket 200`, `getMarket error`): what a run covered. */
  get byOperation(): ReadonlyMap<string, number> {
    return this.#byOperation;
  }

  /**
   * Checks one response. `route` is the route as the server declares it (`/events/:eventId`), `body`
   * the bytes sent. Returns whether the response was checked (a route the document describes).
   */
  check(method: string, route: string, status: number, body: string): boolean {
    const path = openApiPath(route);
    const operation = this.document.paths[path]?.[method.toLowerCase() as HttpMethodKey];
    if (operation === undefined || (this.#errorsOnly && status === 200)) return false;
    const key = status === 200 ? "200" : "default";
    this.#validated++;
    const kind = `${operation.operationId} ${key === "200" ? "200" : "error"}`;
    this.#byOperation.set(kind, (this.#byOperation.get(kind) ?? 0) + 1);
    const at = { operation: operation.operationId, method, route, status };
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      this.#record({ ...at, error: "body is not JSON" });
      return true;
    }
    const validate = this.#validatorFor(`${method} ${path} ${key}`, operation.responses[key].content);
    if (!validate(json)) {
      const errors = validate.errors ?? [];
      this.#record(
        { ...at, error: this.#ajv.errorsText(errors.slice(0, 1), { dataVar: "body" }) },
        this.#ajv.errorsText(errors, { dataVar: "body" }),
      );
    }
    return true;
  }

  /** Throws the violations seen, if any. */
  assertNoViolations(): void {
    if (this.#violations > 0) throw new ResponseViolationsError(this.#violations, this.#kept);
  }

  #validatorFor(key: string, content: { "application/json": { schema: object } }): ValidateFunction {
    let validate = this.#validators.get(key);
    if (validate === undefined) {
      validate = this.#ajv.compile(content["application/json"].schema);
      this.#validators.set(key, validate);
    }
    return validate;
  }

  /** `allErrors` is every rule broken, kept for the test that fails; the log line carries the first. */
  #record(violation: ResponseViolation, allErrors = violation.error): void {
    this.#violations++;
    const { method, route, status, operation } = violation;
    if (this.#kept.length < MAX_KEPT_VIOLATIONS)
      this.#kept.push(`${method} ${route} -> ${status} (${operation}): ${allErrors}`);
    this.#onViolation?.(violation);
  }
}
