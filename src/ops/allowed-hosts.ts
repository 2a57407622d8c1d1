import { isIP } from "node:net";

/** The names every local server answers to, whatever it is bound to. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"] as const;
/** Bound to every interface: not a name anyone types, so it adds nothing to the list. */
const WILDCARD_ADDRESSES = new Set(["0.0.0.0", "::", ""]);

/**
 * A rule for config and options: a bare host name or address, no scheme, no port, no path
 * (`keeper`, `keeper.internal`, `10.0.0.7`).
 */
export const HOST_NAME_PATTERN =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
export const HOST_NAME_RULE = "expected a host name or address without scheme or port, e.g. keeper";

/** Whether `name` is one an allow-list can hold (a name, an IPv4 or an IPv6 address). */
export function isHostName(name: string): boolean {
  return name.length <= 253 && (HOST_NAME_PATTERN.test(name) || isIP(stripBrackets(name)) !== 0);
}

/**
 * The host part of a Host header, lowercase, without port, brackets or trailing dot; undefined when
 * the header is not a host at all (a browser never sends such a header).
 */
export function hostNameOf(hostHeader: string): string | undefined {
  const header = hostHeader.trim().toLowerCase();
  let name: string;
  if (header.startsWith("[")) {
    const close = header.indexOf("]");
    if (close === -1) return undefined;
    const rest = header.slice(close + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    name = header.slice(1, close);
    return isIP(name) === 6 ? name : undefined;
  }
  const colon = header.indexOf(":");
  if (colon !== -1) {
    if (!/^\d{1,5}$/.test(header.slice(colon + 1))) return undefined;
    name = header.slice(0, colon);
  } else name = header;
  name = name.endsWith(".") ? name.slice(0, -1) : name;
  return name !== "" && isHostName(name) ? name : undefined;
}

function stripBrackets(name: string): string {
  return name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
}

/**
 * Which Host headers a local HTTP server answers to. The defence is against DNS rebinding: a web page
 * of evil.example whose name is made to resolve to 127.0.0.1 reaches the server as the same origin,
 * but its browser still says `Host: evil.example`. So the names allowed are the loopback ones, the
 * address the server is bound to and the configured ones. Any IP address is allowed too: a Host
 * written as an address cannot come from a rebound name, and a scraper that reaches a container by
 * its address (a pod IP) must not be refused. The port is not compared: a port mapping in front of a
 * container changes it, and the name alone decides who the browser thinks it talks to.
 */
export class HostAllowList {
  readonly #names: ReadonlySet<string>;

  constructor(options: { boundHost?: string; names?: readonly string[] } = {}) {
    const names = new Set<string>(LOOPBACK_NAMES);
    const bound = stripBrackets((options.boundHost ?? "").toLowerCase());
    if (!WILDCARD_ADDRESSES.has(bound)) names.add(bound);
    for (const name of options.names ?? []) {
      if (!isHostName(name)) throw new RangeError(`allowed host ${JSON.stringify(name)}: ${HOST_NAME_RULE}`);
      names.add(stripBrackets(name.toLowerCase()).replace(/\.$/, ""));
    }
    this.#names = names;
  }

  /**
   * Whether a request with this Host header is answered. No header at all (HTTP/1.0, a bare probe)
   * is answered: a browser always sends one.
   */
  allows(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return true;
    const name = hostNameOf(hostHeader);
    if (name === undefined) return false;
    return this.#names.has(name) || isIP(name) !== 0;
  }
}

/**
 * Whether a request was made by a page of another site, as the browser tells: `Sec-Fetch-Site` says
 * so, or `Origin` names another host (or another port, when both name one) than the request's own
 * Host. Scripts and curl send neither header and are not refused by this (they are not a victim's
 * browser).
 */
export function isFromAnotherSite(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const site = headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") return true;
  const origin = headers.origin;
  if (origin === undefined) return false;
  if (typeof origin !== "string" || typeof headers.host !== "string") return true;
  let from: URL;
  let to: URL;
  try {
    from = new URL(origin);
    to = new URL(`http://${headers.host}`);
  } catch {
    // `Origin: null` (a sandboxed frame, a file:// page) is another site too.
    return true;
  }
  if (from.hostname.toLowerCase() !== to.hostname.toLowerCase()) return true;
  // A port left out on one side (a default one, or TLS in front) is not a difference.
  return from.port !== "" && to.port !== "" && from.port !== to.port;
}
