/**
 * A domain refusal of the simulated world (unknown market, claim of a losing position, order too small).
 * The HTTP layer turns it into the area's error body; `param` names the input to blame, when one is.
 */
export class SandboxError extends Error {
  override readonly name = "SandboxError";
  readonly status: number;
  readonly code: string;
  readonly param: string | undefined;

  constructor(
    status: number,
    problem: { readonly code: string; readonly message: string; readonly param?: string },
  ) {
    super(problem.message);
    this.status = status;
    this.code = problem.code;
    this.param = problem.param;
  }
}

export const notFound = (what: string, id: string, param?: string): SandboxError =>
  new SandboxError(404, {
    code: "not_found",
    message: `${what} ${id} does not exist`,
    ...(param === undefined ? {} : { param }),
  });

export const badRequest = (param: string, code: string, message: string): SandboxError =>
  new SandboxError(400, { param, code, message: `${param}: ${message}` });
