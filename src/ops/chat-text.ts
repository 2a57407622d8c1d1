/**
 * Text from outside Keeper (the service's errors and logs, a memo, a market's title, an RPC error)
 * made inert for a chat message: it must not ping anyone, nor become a link someone may click in a
 * message that comes from Keeper. Keeper's own words around it keep their formatting.
 */

/** Invisible, and enough to stop Slack and Discord from reading a mention or an autolink. */
const ZERO_WIDTH_SPACE = "\u200b";

/** `@everyone`, `@here`, `@channel`, `@someone`: a mention once the word follows the `@` directly. */
const AT_MENTION = /@(?=[\p{L}\p{N}_&!])/gu;
/** `https://`, `ftp://`, `javascript://`: the scheme of a link. */
const SCHEME = /\b([a-z][a-z0-9+.-]*):\/\//gi;
/** `evil.example`, `www.evil.example`: a host name, which Slack links even without a scheme. */
const DOMAIN = /\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}\b/gi;

/** Mentions and markdown links (`[text](url)`) broken, links defanged: they read the same, link nowhere. */
function defanged(text: string): string {
  return text
    .replace(AT_MENTION, `@${ZERO_WIDTH_SPACE}`)
    .replace(SCHEME, "$1[:]//")
    .replace(DOMAIN, (host) => host.replaceAll(".", "[.]"))
    .replaceAll("](", `]${ZERO_WIDTH_SPACE}(`);
}

/**
 * For Discord's `content` and any receiver that has no escaping of its own: defanged, and every `<`
 * followed by a zero-width space, which breaks `<@123>`, `<@&role>`, `<#channel>`, `<!here>` and
 * `<https://...>` (Discord has no escaping by entities).
 */
export function inertText(text: string): string {
  return defanged(text).replaceAll("<", `<${ZERO_WIDTH_SPACE}`);
}

/**
 * For Slack's `text`: defanged, and its three control characters escaped, so `<!channel>`, `<@U123>`
 * and `<http://evil|click>` show as written.
 */
export function slackText(text: string): string {
  return defanged(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * Inside a code span (a command to copy), the value stays exact for the copy: a code span links
 * nothing and pings no one. Only a backtick, which would end the span, is replaced.
 */
function codeText(text: string): string {
  return text.replaceAll("`", "'");
}

/** How values are written into a message for one receiver: as text, or inside a code span. */
export interface ChatEscaping {
  text(value: string): string;
  code(value: string): string;
}

export const SLACK: ChatEscaping = {
  text: slackText,
  code: (value) => codeText(value).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
};

export const DISCORD: ChatEscaping = { text: inertText, code: codeText };
