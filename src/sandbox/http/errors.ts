import { STATUS_CODES } from "node:http";
import type { Area } from "../../core/schemas/common.js";

/**
 * A failure the HTTP layer answers with: the status, a stable machine code, a message that names the
 * parameter and the rule, and the parameter itself when one is to blame. Every error response of the
 * sandbox goes through this one type, whatever raised it.
 */
export class HttpProblem extends Error {
  override readonly name = "HttpProblem";
  readonly status: number;
  readonly code: string;
  readonly param: string | undefined;

  constructor(status: number, code: string, message: string, param?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }

  /** The message as clients see it: always prefixed with the parameter it names, if any. */
  get detail(): string {
    if (this.param === undefined || this.message.startsWith(`${this.param}:`)) return this.message;
    return `${this.param}: ${this.message}`;
  }
}

/** Where an error body shape is decided: an area of the service, or no area for paths outside them. */
export type ErrorArea = Area | "none";

const AREA_PREFIXES: ReadonlyArray<readonly [string, Area]> = [
  ["/prediction/", "prediction"],
  ["/ultra/", "ultra"],
  ["/swap/", "swap"],
  ["/trigger/", "trigger"],
  ["/recurring/", "recurring"],
  ["/send/", "send"],
];

/** The area a URL belongs to, by its path prefix (so unknown paths inside an area still get its shape). */
export function areaOfUrl(url: string): ErrorArea {
  for (const [prefix, area] of AREA_PREFIXES) if (url.startsWith(prefix)) return area;
  return "none";
}

/** Prediction's `type` field, by status class, in the vocabulary its live counterpart uses. */
function predictionErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/** The error body in the shape of the area (api-gaps: each area answers in its own shape). */
export function errorBody(area: ErrorArea, problem: HttpProblem, requestId: string): Record<string, unknown> {
  const message = problem.detail;
  switch (area) {
    case "prediction":
      return {
        type: predictionErrorType(problem.status),
        message,
        code: problem.code,
        ...(problem.param === undefined ? {} : { param: problem.param }),
        request_id: requestId,
      };
    case "trigger":
      return { error: message, code: problem.status, cause: problem.code };
    case "recurring":
      return { code: problem.status, error: message, status: STATUS_CODES[problem.status] ?? "Error" };
    default:
      return { error: message };
  }
}
