/**
 * Requests per watched market for the market watcher's candidate reads, counted against the sandbox:
 * the events list with its markets (every provider, every page), one GET /events/{id}/markets per held
 * event, one GET /markets/{id} per held market. Prints a table; not a test.
 *
 *   npx tsx bench/watch-requests.ts [--wallets N] [--events-per-category K] [--page-size P]
 */
import { parseArgs } from "node:util";
import { collectAll, createApiClient, iteratePositions, paginate } from "../src/api/index.js";
import { KNOWN_EVENT_PROVIDERS } from "../src/core/event-details.js";
import { isHeld } from "../src/keeper/state/holdings.js";
import { startSandbox } from "../src/sandbox/index.js";

const { values } = parseArgs({
  options: {
    wallets: { type: "string", default: "200" },
    "events-per-category": { type: "string", default: "4" },
    "page-size": { type: "string", default: "100" },
  },
});
const pageSize = Number(values["page-size"]);
const sandbox = await startSandbox({
  port: 0,
  apiKey: "bench-key",
  rateLimit: false,
  walletCount: Number(values.wallets),
  eventsPerCategory: Number(values["events-per-category"]),
});
try {
  const client = createApiClient({ baseUrl: sandbox.url, apiKey: "bench-key" });
  const held = new Map<string, string>();
  for (const wallet of sandbox.wallets)
    for (const p of await collectAll(iteratePositions(client, { ownerPubkey: wallet }, { pageSize })))
      if (isHeld(p)) held.set(p.marketId, p.eventId);
  const heldEvents = new Set(held.values());

  let listRequests = 0;
  const seen = new Set<string>();
  for (const provider of KNOWN_EVENT_PROVIDERS) {
    const pages = paginate(
      (range) => {
        listRequests += 1;
        return client.prediction.listEvents({ provider, includeMarkets: true, ...range });
      },
      { pageSize },
    );
    for await (const event of pages)
      for (const m of event.markets ?? []) if (held.has(m.marketId)) seen.add(m.marketId);
  }
  let eventRequests = 0;
  for (const eventId of heldEvents) {
    const pages = paginate(
      (range) => {
        eventRequests += 1;
        return client.prediction.listEventMarkets(eventId, range);
      },
      { pageSize },
    );
    await collectAll(pages);
  }
  const marketRequests = held.size;
  const per = (n: number) => (n / held.size).toFixed(3);
  console.log(
    `wallets ${sandbox.wallets.length} · held markets ${held.size} in ${heldEvents.size} events · catalogue ${sandbox.world.events.length} events, ${sandbox.world.markets.length} markets · page size ${pageSize}`,
  );
  console.log(
    `GET /events?includeMarkets=true (${KNOWN_EVENT_PROVIDERS.length} providers, all pages): ${listRequests} requests, ${per(listRequests)} per watched market (showed ${seen.size}/${held.size})`,
  );
  console.log(
    `GET /events/{eventId}/markets per held event: ${eventRequests} requests, ${per(eventRequests)} per watched market`,
  );
  console.log(
    `GET /markets/{marketId} per held market: ${marketRequests} requests, ${per(marketRequests)} per watched market`,
  );
} finally {
  await sandbox.close();
}
