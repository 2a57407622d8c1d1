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

const MAX_RAW_MESSAGE = 200;

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
 * front of the service may answer in another), and last as raw text, shortened.
 */
export function parseErrorBody(area: Area, text: string, statusText: string): ParsedErrorBody {
  const json = parseJson(text);
  if (json !== undefined) {
    const own = SHAPE_OF_AREA[area];
    const order: Shape[] = [own, ...(Object.keys(errorBodies) as Shape[]).filter((s) => s !== own)];
    for (const shape of order) {
      const parsed = fromShape(shape, json);
      if (parsed !== undefined) return parsed;
    }
  }
  const raw = text.trim().slice(0, MAX_RAW_MESSAGE);
  return {
    message: raw === "" ? statusText || "no error body" : raw,
    code: undefined,
    param: undefined,
    requestId: undefined,
  };
}
