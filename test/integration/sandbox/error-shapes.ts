import { expect } from "vitest";
import type { Area } from "../../../src/core/schemas/common.js";
import { errorBodies } from "../../../src/core/schemas/common.js";

/** The error body schema of an area (api-gaps): token search, swap and send share the plain shape. */
export function errorSchemaOf(area: Area) {
  if (area === "prediction") return errorBodies.prediction;
  if (area === "trigger") return errorBodies.trigger;
  if (area === "recurring") return errorBodies.recurring;
  return errorBodies.plain;
}

/** The human message of an error body, whatever the area. */
export function messageOf(area: Area, body: Record<string, unknown>): string {
  return String(area === "prediction" ? body.message : body.error);
}

/**
 * Checks a response is the given status in the area's shape, that its message starts with the parameter
 * (and holds the rule when one is given), and that the request id is on the response.
 */
export async function expectAreaError(
  response: Response,
  { status, area, param, rule }: { status: number; area: Area; param?: string; rule?: string },
): Promise<Record<string, unknown>> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toBeTruthy();
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(errorSchemaOf(area).safeParse(body).success, text).toBe(true);
  if (area === "prediction") {
    expect(body.request_id).toBe(requestId);
    if (param !== undefined) expect(body.param).toBe(param);
  }
  if (area === "trigger" || area === "recurring") expect(body.code).toBe(status);
  const message = messageOf(area, body);
  if (param !== undefined) expect(message.startsWith(`${param}: `), message).toBe(true);
  if (rule !== undefined) expect(message).toContain(rule);
  return body;
}
