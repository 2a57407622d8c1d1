import { SandboxError } from "../world/errors.js";
import { HttpProblem } from "./errors.js";

/** Framework errors carry a 4xx `statusCode` (bad JSON, wrong content type, body too large). */
function isClientFrameworkError(error: unknown): error is Error & { statusCode: number; code?: string } {
  if (!(error instanceof Error)) return false;
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === "number" && status >= 400 && status < 500;
}

/** Which part of the request a framework error is about, so the message names it. */
function frameworkParam(code: string | undefined): string {
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH")
    return "content-type";
  return "body";
}

/** Every error that reaches a response, as the problem to answer with. */
export function toHttpProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  // A refusal of the world (unknown market, claim too early): its own status, code and parameter.
  if (error instanceof SandboxError)
    return new HttpProblem(error.status, error.code, error.message, error.param);
  if (isClientFrameworkError(error)) {
    const param = frameworkParam(error.code);
    const code = (error.code ?? "invalid_request").replace(/^FST_ERR_/, "").toLowerCase();
    return new HttpProblem(error.statusCode, code, error.message, param);
  }
  return new HttpProblem(500, "internal_error", "internal error in the sandbox service");
}
