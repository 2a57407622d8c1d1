import type { IntentKind } from "../core/intent.js";
import { type ChatEscaping, DISCORD, inertText, SLACK } from "./chat-text.js";

/** The events worth a message to a person; the same names as `notifications.events` in the config. */
export type NotificationEvent =
  | {
      kind: "confirmed";
      wallet: string;
      intent: string;
      intentKind: IntentKind;
      signature: string;
      strategy?: string;
      /** Dollars as a decimal string ("1.50"), e.g. from `formatUsd`. */
      amountUsd?: string;
    }
  | {
      kind: "refused";
      wallet: string;
      intent: string;
      intentKind: IntentKind;
      reason: string;
      detail?: string;
      /** Which try of the intent (1, then +1 per re-admission or `keeper retry`). */
      tries?: number;
    }
  | { kind: "failed"; wallet: string; intent: string; intentKind: IntentKind; error: string }
  | {
      kind: "stuck";
      wallet: string;
      intent: string;
      intentKind: IntentKind;
      /** How long the intent has been `sending` without a change. */
      sendingSeconds: number;
    }
  | { kind: "stale"; staleWallets: number; totalWallets: number; oldestAgeSeconds: number }
  | { kind: "breaker"; breaker: string; tripped: boolean; detail?: string }
  /** Redis came back without its data while Keeper was paused: the pause switch was put back. */
  | { kind: "pause_restored"; reason?: string; since?: number };

export type NotificationKind = NotificationEvent["kind"];

export interface WebhookPayload {
  /** Slack reads `text` (mrkdwn: what came from outside Keeper is escaped in it). */
  text: string;
  /** Discord reads `content` (at most 2,000 characters). */
  content: string;
  /** Discord: no mention in the message pings anyone, whatever it says. */
  allowed_mentions: { parse: [] };
  /** Slack: no `@name` is turned into a mention, and no link is unfurled into a preview. */
  link_names: false;
  unfurl_links: false;
  unfurl_media: false;
  /** The same facts as fields, for receivers that parse them (their text made inert too). */
  keeper: Record<string, string | number | boolean> & { event: NotificationKind; at: string };
}

const MAX_TEXT = 1_900;
const MAX_FREE_TEXT = 300;

/**
 * Events of the same key within the duplicate window are sent once: a stale poll or a tripped
 * breaker is reported again each tick, and one message per window is enough.
 */
export function dedupeKey(event: NotificationEvent): string {
  switch (event.kind) {
    case "confirmed":
    case "failed":
      return `${event.kind}-${event.intent}`;
    case "refused":
      // A retried intent refused again is news; a re-run of the same try is not.
      return `refused-${event.intent}-${event.tries ?? 1}-${event.reason}`;
    case "stuck":
      return `stuck-${event.intent}`;
    case "stale":
      return "stale";
    case "breaker":
      return `breaker-${event.breaker}-${event.tripped ? "open" : "closed"}`;
    case "pause_restored":
      return "pause_restored";
  }
}

/**
 * Builds the message from the event's own fields only: nothing else can leak into it. Every value is
 * data: it goes into Keeper's sentence through the receiver's own escaping, so a service error that
 * says `@everyone` or `<https://evil|click>` pings no one and links nowhere.
 */
export function buildPayload(event: NotificationEvent, at: Date): WebhookPayload {
  const fields: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(event)) {
    if (name === "kind") continue;
    if (typeof value === "string") fields[name] = inertText(truncate(value, MAX_FREE_TEXT));
    else if (typeof value === "number" || typeof value === "boolean") fields[name] = value;
  }
  return {
    text: truncate(`Keeper: ${describe(event, SLACK)}`, MAX_TEXT),
    content: truncate(`Keeper: ${describe(event, DISCORD)}`, MAX_TEXT),
    allowed_mentions: { parse: [] },
    link_names: false,
    unfurl_links: false,
    unfurl_media: false,
    keeper: { ...fields, event: event.kind, at: at.toISOString() },
  };
}

/** The sentence, with every value of the event written through the receiver's escaping. */
function describe(event: NotificationEvent, escaping: ChatEscaping): string {
  const show = escaping.text;
  const free = (text: string) => show(truncate(text, MAX_FREE_TEXT));
  const shortened = (text: string) => show(short(text));
  switch (event.kind) {
    case "confirmed": {
      const amount = event.amountUsd === undefined ? "" : ` for $${show(event.amountUsd)}`;
      return `${show(event.intentKind)} confirmed${amount}, wallet ${shortened(event.wallet)}, signature ${shortened(event.signature)}`;
    }
    case "refused": {
      const detail = event.detail === undefined ? "" : ` (${free(event.detail)})`;
      return `${show(event.intentKind)} refused by policy: ${show(event.reason)}${detail}, wallet ${shortened(event.wallet)}, intent ${show(event.intent)}. ${untouched(event.intentKind)} Keeper will not try it again by itself: look at why, then run \`keeper retry ${escaping.code(event.intent)}\`.`;
    }
    case "failed":
      return `${show(event.intentKind)} failed: ${free(event.error)}, wallet ${shortened(event.wallet)}, intent ${show(event.intent)}`;
    case "stuck":
      return `${show(event.intentKind)} stuck sending for ${event.sendingSeconds} s, wallet ${shortened(event.wallet)}, intent ${show(event.intent)}; housekeeping resumes its recorded transaction unless a sign job still runs it`;
    case "stale":
      return `${event.staleWallets} of ${event.totalWallets} wallets not polled successfully for ${event.oldestAgeSeconds} s`;
    case "breaker": {
      const detail = event.detail === undefined ? "" : `: ${free(event.detail)}`;
      return `circuit breaker ${show(event.breaker)} ${event.tripped ? "tripped" : "reset"}${detail}`;
    }
    case "pause_restored": {
      const reason = event.reason === undefined ? "" : ` (${free(event.reason)})`;
      return `Redis lost its data while Keeper was paused${reason}: the pause is restored and holds until \`keeper resume\`. The ledger and the queues went with the data: check them before resuming.`;
    }
  }
}

/** What a refusal left as it was (nothing was signed), so a person knows what still waits. */
function untouched(kind: IntentKind): string {
  switch (kind) {
    case "claim":
      return "Nothing was signed: the position is still unclaimed.";
    case "close":
    case "closeAll":
      return "Nothing was signed: the position is still open.";
    case "cancelTrigger":
    case "cancelRecurring":
      return "Nothing was signed: the order is still open.";
    case "createTrigger":
    case "createRecurring":
    case "swap":
      return "Nothing was signed: no order was placed.";
  }
}

/** `AbcD…wxyZ`: enough to recognise a wallet or signature, short enough for a chat line. */
function short(value: string): string {
  return value.length <= 12 ? value : `${value.slice(0, 4)}…${value.slice(-4)}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
