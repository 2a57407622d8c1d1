import { type Area, errorBodies } from "../core/schemas/common.js";

/** What the client keeps of an error answer, whatever the area's body shape. */
export interface ParsedErrorBody {
  readonly message: string;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
}

type Shape = keyof typeof errorBodies;

/** The shape each area answers in (api-gaps); token search, swap and send share the plain `{ error }`. */
export const SHAPE_OF_AREA: Readonly<Record<Area, Shape>> = {
  prediction: "prediction",
  trigger: "trigger",
  recurring: "recurring",
  ultra: "plain",
  swap: "plain",
  send: "plain",
};

/** The most of any one field of an error answer that is kept: a hostile body cannot fill a message. */
export const MAX_ERROR_FIELD = 200;

/** `text` cut to `max` characters, with `…` marking the cut. */
export function shorten(text: string, max = MAX_ERROR_FIELD): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function shortenFields(parsed: ParsedErrorBody): ParsedErrorBody {
  const cut = (value: string | undefined) => (value === undefined ? undefined : shorten(value));
  return {
    message: shorten(parsed.message),
    code: cut(parsed.code),
    param: cut(parsed.param),
    requestId: cut(parsed.requestId),
  };
}

function fromShape(shape: Shape, json: unknown): ParsedErrorBody | undefined {
  switch (shape) {
    case "prediction": {
      const r = errorBodies.prediction.safeParse(json);
      if (!r.success) return undefined;
      return {
        message: r.data.message,
        code: r.data.code ?? r.data.type,
        param: r.data.param,
        requestId: r.data.request_id,
      };
    }
    case "trigger": {
      const r = errorBodies.trigger.safeParse(json);
      if (!r.success) return undefined;
      const message = r.data.cause === undefined ? r.data.error : `${r.data.error} (${r.data.cause})`;
      return { message, code: String(r.data.code), param: undefined, requestId: undefined };
    }
    case "recurring": {
      const r = errorBodies.recurring.safeParse(json);
      if (!r.success) return undefined;
      return { message: r.data.error, code: String(r.data.code), param: undefined, requestId: undefined };
    }
    case "plain": {
      const r = errorBodies.plain.safeParse(json);
      if (!r.success) return undefined;
      return { message: r.data.error, code: undefined, param: undefined, requestId: undefined };
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, a truncated body): the caller falls back to the raw text.
    return undefined;
  }
}

/**
 * Reads an error answer: first in the area's own shape, then in any other known shape (a gateway in
 * front of the service may answer in another), and last as raw text. Every field is cut to
 * `MAX_ERROR_FIELD` characters (`…` marks a cut): the body is the service's, and may be megabytes.
 */
export function parseErrorBody(area: Area, text: string, statusText: string): ParsedErrorBody {
  const json = parseJson(text);
  if (json !== undefined) {
    const own = SHAPE_OF_AREA[area];
    const order: Shape[] = [own, ...(Object.keys(errorBodies) as Shape[]).filter((s) => s !== own)];
    for (const shape of order) {
      const parsed = fromShape(shape, json);
      if (parsed !== undefined) return shortenFields(parsed);
    }
  }
  const raw = shorten(text.trim());
  return {
    message: raw === "" ? statusText || "no error body" : raw,
    code: undefined,
    param: undefined,
    requestId: undefined,
  };
}
