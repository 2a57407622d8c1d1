import { createHash, timingSafeEqual } from "node:crypto";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Whether an Authorization header carries the operator token: `Bearer <token>` (the status page's
 * buttons, scripts) or, where `allowBasic`, HTTP Basic with the token as the password, any user name
 * (a browser opening /queues asks for it and then sends it with every request bull-board makes).
 * Compared in constant time, over digests so that the length of the token does not show either.
 */
export function carriesAdminToken(
  authorization: string | undefined,
  token: string,
  { allowBasic = false }: { allowBasic?: boolean } = {},
): boolean {
  if (!authorization) return false;
  const [scheme = "", value = ""] = authorization.trim().split(/\s+/, 2);
  let offered: string | undefined;
  if (scheme.toLowerCase() === "bearer") offered = value;
  else if (allowBasic && scheme.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    offered = colon === -1 ? undefined : decoded.slice(colon + 1);
  }
  if (offered === undefined) return false;
  return timingSafeEqual(digest(offered), digest(token));
}

/**
 * A browser remembers Basic credentials and sends them by itself, even on a request another site's
 * page makes: a request that changes something is taken only from a page of the ops server itself
 * (what the browser says in Origin and Sec-Fetch-Site; curl and scripts send neither).
 */
export function isCrossSiteWrite(
  method: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): boolean {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
  const site = headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") return true;
  const origin = headers.origin;
  if (typeof origin !== "string") return false;
  try {
    return new URL(origin).host !== headers.host;
  } catch {
    return true;
  }
}
