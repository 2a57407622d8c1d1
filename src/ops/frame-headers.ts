import type { FastifyInstance } from "fastify";

const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** A policy with `frame-ancestors 'none'` in it: kept when it says so already, added to otherwise. */
export function withNoFraming(policy: string | undefined): string {
  if (policy === undefined || policy.trim() === "") return FRAME_ANCESTORS;
  if (/(^|;)\s*frame-ancestors\s/i.test(policy)) return policy;
  return `${policy.trim().replace(/;$/, "")}; ${FRAME_ANCESTORS}`;
}

/**
 * No page of the ops server may be framed by another site: the status page's buttons and bull-board's
 * would otherwise be one click away from a page that lays its own content over them. Every response
 * says so, in both the header browsers use now and the one older ones read.
 */
export function registerFrameHeaders(app: FastifyInstance): void {
  app.addHook("onSend", async (_request, reply, payload) => {
    const current = reply.getHeader("content-security-policy");
    reply.header("content-security-policy", withNoFraming(typeof current === "string" ? current : undefined));
    reply.header("x-frame-options", "DENY");
    return payload;
  });
}
