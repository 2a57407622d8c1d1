import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeeperConfig } from "../../../src/config/load-config.js";
import type { Intent } from "../../../src/core/intent.js";
import { QUEUES, type RedisKeys } from "../../../src/keeper/names.js";
import { PauseSwitch } from "../../../src/keeper/operator/pause.js";
import type { Ledger } from "../../../src/keeper/state/ledger.js";
import { PollRecords } from "../../../src/keeper/state/poll-record.js";
import { StrategyStateStore } from "../../../src/keeper/state/strategy-state.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { type OpsServer, startOpsServer } from "../../../src/ops/http.js";
import { createLogger } from "../../../src/ops/logger.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { statusPagePlugin } from "../../../src/status/status-plugin.js";
import {
  loadTestConfig,
  positionsOf,
  startTestSandbox,
  writeKeeperConfig,
} from "../../helpers/keeper-harness.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../helpers/ledger-queues.js";
import { rawRequest } from "../../helpers/raw-http.js";
import { TEST_ADMIN_TOKEN } from "../../helpers/test-secrets.js";

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>`;

/** User strategies, plain JS as a user might write them: one shows itself on the page, one fails to. */
const USER_STRATEGY = (name: string, statusView: string) => `export default {
  name: "${name}",
  contractVersion: 1,
  description: "test: a status view",
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  evaluate: ({ state }) => ({ intents: [], state }),
  statusView: ${statusView},
};
`;
const SHOWS_ITSELF = USER_STRATEGY(
  "my-view",
  `({ positions, state }) => ({
    positionColumns: [{ key: "my-view", label: "my view", cells: positions[0] ? { [positions[0].pubkey]: { text: "<b>first</b>", isAlert: true } } : {} }],
    tables: [{ title: "My table", columns: ["note", "when"], rows: [[{ text: state.note ?? "no note" }, { at: 1800000000 }]] }],
  })`,
);
const VIEW_THROWS = USER_STRATEGY("broken-view", `() => { throw new Error("view boom"); }`);

async function writeModule(name: string, text: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), "keeper-status-view-")), name);
  await writeFile(file, text);
  return file;
}

/**
 * The status page and its operator routes over real HTTP: real Redis (ledger, pause switch, queues,
 * and the positions a poll recorded, read from the sandbox service over HTTP).
 */
describe("status page on the ops server", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let config: KeeperConfig;
  let keys: RedisKeys;
  let ledger: Ledger;
  let queues: Queue[];
  const logs = createCaptureStream();
  const servers: OpsServer[] = [];
  const refusals: string[] = [];

  const refused: Intent = {
    kind: "claim",
    key: "claim-refused-one",
    wallet: "",
    strategy: "auto-claim",
    positionPubkey: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
    reason: `winning ${HOSTILE}`,
  };

  async function serve(adminToken?: string, { queuesWritable = false } = {}): Promise<OpsServer> {
    const logger = createLogger({ level: "debug", pretty: false, destination: logs });
    const statusPage = statusPagePlugin(
      {
        deps: {
          config,
          redis: ctx.redis,
          keys,
          wallets: sandbox.wallets,
        },
        ...(adminToken ? { adminToken, queues, queuesWritable } : {}),
        onRefused: (reason) => refusals.push(reason),
      },
      logger,
    );
    const server = await startOpsServer({
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      checks: {},
      liveness: () => ({ ok: true, detail: "test" }),
      logger,
      plugins: [statusPage],
      onHostRefused: () => refusals.push("host"),
    });
    servers.push(server);
    return server;
  }

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    ctx = await ledgerAndQueues("status-page");
    config = await loadTestConfig(
      await writeKeeperConfig(sandbox, ctx.prefix, {
        extra: `strategies:
  - name: auto-claim
  - name: dca
    plans:
      - id: weekly-sol
        inputMint: ${sandbox.usdcMint}
        outputMint: So11111111111111111111111111111111111111112
        inAmountRaw: "200000000"
        numberOfOrders: 2
        intervalSeconds: 86400
  - name: my-view
    module: ${await writeModule("my-view.mjs", SHOWS_ITSELF)}
  - name: broken-view
    module: ${await writeModule("broken-view.mjs", VIEW_THROWS)}
`,
      }),
    );
    ({ keys, ledger } = ctx);
    queues = Object.values(QUEUES).map((name) => ctx.queue(name));
    const wallet = sandbox.wallets[0] ?? "";
    await ledger.admit({ ...refused, wallet });
    await ledger.update(refused.key, { status: "refused", error: `inflow_short ${HOSTILE}` });
    await ledger.admit({ ...refused, key: "claim-confirmed-one", wallet, reason: "winning" });
    await ledger.update("claim-confirmed-one", {
      status: "confirmed",
      signature: "sig1",
      amountMicroUsd: "2500000",
    });
    await ctx.redis.zadd(keys.lastPolls, Math.floor(Date.now() / 1000), wallet);
    // A DCA round running, a plan no longer configured, and a limit order Keeper opened.
    await new StrategyStateStore(ctx.redis, keys).save(wallet, "dca", {
      plans: {
        "weekly-sol": {
          round: 2,
          startedAt: 1_800_000_000,
          endsAt: 1_800_172_800,
          retryUntil: 1_800_086_400,
          order: "DcaOrder1111",
        },
        "old-plan": { round: 1, startedAt: 1_700_000_000, endsAt: 1_700_172_800, retryUntil: 1_700_086_400 },
      },
    });
    await ctx.redis.hset(keys.ledgerTriggerOrders(wallet), "limit-buy-1", "TriggerOrder1111");
    await new StrategyStateStore(ctx.redis, keys).save(wallet, "my-view", { note: `from state ${HOSTILE}` });
    // A hostile market title from the service: the first wallet's first position's market.
    const position = sandbox.world.positionsOfWallet(0)[0];
    if (!position) throw new Error("the sandbox wallet has no position");
    (sandbox.world.marketOf(position) as { title: string }).title = `Market ${HOSTILE}`;
    // What a poll of the first wallet records (the page reads that, never the service).
    await new PollRecords(ctx.redis, keys).record(
      wallet,
      { positions: await positionsOf(sandbox, wallet) },
      Math.floor(Date.now() / 1000),
    );
  }, 60_000);

  afterAll(async () => {
    for (const server of servers) await server.close();
    await sandbox?.close();
    await ctx?.cleanup();
  });

  it("without a token: the page is read-only and the operator routes do not exist", async () => {
    const server = await serve();
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const body = await page.text();
    expect(body).toContain("mode <b>live</b>");
    expect(body).toContain("running");
    expect(body).not.toContain("data-action");
    expect(body).not.toContain("/status.js");
    expect(body).not.toContain("/queues");
    for (const wallet of sandbox.wallets) expect(body).toContain(wallet);
    // The wallet polled a moment ago is fresh; the others, never polled, are marked stale.
    const articles = body.split('<article class="wallet"').slice(1);
    expect(articles).toHaveLength(sandbox.wallets.length);
    expect(articles[0]).toContain(`data-wallet="${sandbox.wallets[0]}"`);
    expect(articles[0]).not.toContain("STALE");
    for (const other of articles.slice(1)) expect(other).toContain("STALE (none within 120s)");
    for (const path of ["/admin/pause", "/admin/resume", `/admin/retry/${refused.key}`]) {
      const answer = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(answer.status).toBe(404);
    }
    expect((await fetch(`${server.url}/queues/`)).status).toBe(404);
    expect(await new PauseSwitch(ctx.redis, keys).isPaused()).toBe(false);
  });

  it("escapes what the service and the ledger say: a hostile market title, reason and error stay text", async () => {
    const server = await serve(TEST_ADMIN_TOKEN);
    const body = await (await fetch(`${server.url}/`)).text();
    expect(body).not.toContain("<script>alert");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain(
      "Market &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;",
    );
    expect(body).toContain("inflow_short &lt;script&gt;");
    // The only script tag is the page's own file.
    expect(body.match(/<script/g)).toEqual(["<script"]);
    expect(body).toContain('<script src="/status.js" defer></script>');
  });

  it("shows exact contract counts: the fractional position as the service's contractsMicro says", async () => {
    const server = await serve();
    const body = await (await fetch(`${server.url}/`)).text();
    const position = sandbox.world.positionsOfWallet(0)[0];
    if (!position) throw new Error("the sandbox wallet has no position");
    const whole = Math.floor(position.contracts);
    expect(position.contracts).toBe(whole + 0.5);
    const row = body.split(`data-position="${sandbox.world.positionPubkey(position)}"`)[1]?.split("</tr>")[0];
    expect(row).toContain(`<td data-label="contracts" class="num">${whole}.5</td>`);
  });

  it("shows each position's value at the mark, what it realizes at the bid and its pnl, and says when no one bids", async () => {
    const wallet = sandbox.wallets[1] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter((p) => p.marketMetadata.status === "open");
    const [thin, bidless] = open;
    if (!thin || !bidless) throw new Error("the sandbox's second wallet has fewer than two open positions");
    // 2.5 contracts marked at $0.80 ($2.00) whose bid is $0.60 ($1.50); another nobody bids on.
    const positions = [
      {
        ...thin,
        contracts: "2",
        contractsMicro: "2500000",
        valueUsd: "2000000",
        markPriceUsd: "800000",
        sellPriceUsd: "600000",
      },
      { ...bidless, sellPriceUsd: null },
    ];
    await new PollRecords(ctx.redis, keys).record(wallet, { positions }, Math.floor(Date.now() / 1000));
    const body = await (await fetch(`${(await serve()).url}/`)).text();
    const second = body.split('<article class="wallet"')[2] ?? "";
    expect(second).toMatch(/>value<\/th><th[^>]*>realizable<\/th><th[^>]*>realizable pnl<\/th>/);
    const row = (pubkey: string) => second.split(`data-position="${pubkey}"`)[1]?.split("</tr>")[0] ?? "";
    const cell = (pubkey: string, label: string) =>
      row(pubkey)
        .split(`data-label="${label}"`)[1]
        ?.split("</td>")[0]
        ?.replace(/<[^>]+>/g, "")
        .replace(/^[^>]*>/, "") ?? "";
    expect(cell(thin.pubkey, "value")).toBe("$2.00");
    // No strategy here estimates a sell fee: the bid before fees, marked so.
    expect(cell(thin.pubkey, "realizable")).toBe("$1.50*");
    const cost = BigInt(thin.totalCostUsd);
    const pnl = 1_500_000n - cost;
    expect(cell(thin.pubkey, "realizable pnl")).toContain(
      `${pnl > 0n ? "+" : "-"}$${(Number(pnl < 0n ? -pnl : pnl) / 1e6).toFixed(2)}`,
    );
    expect(cell(bidless.pubkey, "bid")).toBe("no bid");
    expect(cell(bidless.pubkey, "realizable pnl")).toBe("no bid");
  });

  it("shows each wallet's DCA plans (from config and state) and the limit orders Keeper opened", async () => {
    const server = await serve();
    const body = await (await fetch(`${server.url}/`)).text();
    const first = body.split('<article class="wallet"')[1] ?? "";
    expect(first).toContain("<h4>DCA plans (2)</h4>");
    expect(first).toMatch(
      /<td>weekly-sol<\/td><td>2<\/td><td>2027-01-15T08:00:00Z<\/td><td>2027-01-17T08:00:00Z<\/td><td class="mono short">DcaOrder1111<\/td><td>yes<\/td>/,
    );
    expect(first).toMatch(/<td>old-plan<\/td><td>1<\/td>.*<td>no \(stopped\)<\/td>/);
    expect(first).toContain("TriggerOrder1111</td><td>limit order (limit-buy-1)</td>");
    // And what is next: the running round's end, through the strategy's statusView.
    expect(first).toContain(
      '<time datetime="2027-01-17T08:00:00Z">2027-01-17T08:00:00Z</time> plan weekly-sol: round 2, its last, runs until then</li>',
    );
    // The other wallets have no round yet: the configured plan shows as not started.
    expect(body.split('<article class="wallet"')[2]).toContain("<td>weekly-sol</td><td>not started</td>");
  });

  it("shows what a strategy's statusView hook gives, escaped, and why one that fails shows nothing", async () => {
    const server = await serve();
    const body = await (await fetch(`${server.url}/`)).text();
    const [first = "", second = ""] = body.split('<article class="wallet"').slice(1);
    const firstPosition = (await positionsOf(sandbox, sandbox.wallets[0] ?? ""))[0]?.pubkey ?? "";
    expect(first).toContain("<th>state</th><th>my view</th></tr>");
    expect(first).toMatch(
      new RegExp(
        `<tr data-position="${firstPosition}"[^>]*>[^]*?<td data-label="my view" class="my-view warn">&lt;b&gt;first&lt;/b&gt;</td></tr>`,
      ),
    );
    expect(first).toContain("<h4>My table (1)</h4>");
    expect(first).toContain(
      `<td>from state ${HOSTILE.replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")}</td><td>2027-01-15T08:00:00Z</td>`,
    );
    expect(first).toContain('<p class="bad">broken-view: statusView() failed: view boom</p>');
    // Another wallet: no state of its own, the same columns and tables.
    expect(second).toContain("<td>no note</td>");
    expect(body).not.toContain("<b>first</b>");
  });

  it("shows refused intents highlighted with their reason, and the ledger filtered and paged", async () => {
    const server = await serve();
    const body = await (await fetch(`${server.url}/`)).text();
    const needsLook = body.slice(body.indexOf('id="needs-look"'), body.indexOf('id="breakers"'));
    expect(needsLook).toContain('class="alert"');
    expect(needsLook).toMatch(/<tr class="bad" data-key="claim-refused-one">/);
    expect(needsLook).not.toContain("claim-confirmed-one");

    const confirmedOnly = await (await fetch(`${server.url}/?status=confirmed`)).text();
    const ledgerPart = confirmedOnly.slice(confirmedOnly.indexOf('id="ledger"'));
    expect(ledgerPart).toContain('data-key="claim-confirmed-one"');
    expect(ledgerPart).not.toContain('data-key="claim-refused-one"');
    expect(ledgerPart).toContain("1 matching");

    // Paging: 55 closes, 50 a page, newest first.
    for (let i = 0; i < 55; i += 1)
      await ledger.admit({
        kind: "close",
        key: `close-paged-${i}`,
        wallet: sandbox.wallets[1] ?? "",
        strategy: "exit-rules",
        positionPubkey: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
        reason: "paging",
      });
    const rowsOf = (html: string) =>
      html.slice(html.indexOf('id="ledger"')).match(/data-key="close-paged-\d+"/g) ?? [];
    const first = await (await fetch(`${server.url}/?kind=close&wallet=${sandbox.wallets[1]}`)).text();
    expect(first).toContain("55 matching");
    expect(first).toContain("page 1 of 2");
    expect(rowsOf(first)).toHaveLength(50);
    expect(first).toContain(`href="/?kind=close&amp;wallet=${sandbox.wallets[1]}&amp;page=2#ledger"`);
    const second = await (
      await fetch(`${server.url}/?kind=close&wallet=${sandbox.wallets[1]}&page=2`)
    ).text();
    expect(second).toContain("page 2 of 2");
    expect(rowsOf(second)).toHaveLength(5);
    expect(new Set([...rowsOf(first), ...rowsOf(second)]).size).toBe(55);

    const bad = await fetch(`${server.url}/?status=bogus`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/^status: expected one of pending, /);
    const badPage = await fetch(`${server.url}/?page=0`);
    expect(badPage.status).toBe(400);
    expect(await badPage.text()).toBe("page: expected a whole number from 1");
  });

  it("with a token: 401 without it or with a wrong one; pause, resume and retry with it", async () => {
    const server = await serve(TEST_ADMIN_TOKEN);
    const post = (path: string, authorization?: string, body: unknown = {}) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });
    const pause = new PauseSwitch(ctx.redis, keys);

    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('data-action="pause"');
    expect(page).toContain(`data-action="retry" data-key="${refused.key}"`);
    expect(page).toContain('href="/queues/"');

    for (const authorization of [
      undefined,
      "Bearer wrong-token-wrong-token",
      `Basic ${TEST_ADMIN_TOKEN}`,
      TEST_ADMIN_TOKEN,
    ]) {
      const answer = await post("/admin/pause", authorization);
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    // Basic credentials, which a browser sends by itself once given, are not taken here.
    const basic = `Basic ${Buffer.from(`operator:${TEST_ADMIN_TOKEN}`).toString("base64")}`;
    expect((await post("/admin/pause", basic)).status).toBe(401);
    expect(await pause.isPaused()).toBe(false);
    expect((await post(`/admin/retry/${refused.key}`)).status).toBe(401);
    expect((await ledger.get(refused.key))?.status).toBe("refused");

    const paused = await post("/admin/pause", `Bearer ${TEST_ADMIN_TOKEN}`, {
      reason: "looking at a refusal",
    });
    expect(paused.status).toBe(200);
    expect(await pause.status()).toMatchObject({ paused: true, reason: "looking at a refusal" });
    const pausedPage = await (await fetch(`${server.url}/`)).text();
    expect(pausedPage).toContain("PAUSED since");
    expect(pausedPage).toContain('data-action="resume"');

    // As curl sends it without a body (docs/operations.md).
    const resumed = await fetch(`${server.url}/admin/resume`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(resumed.status).toBe(200);
    expect(await pause.isPaused()).toBe(false);

    const retried = await post(`/admin/retry/${refused.key}`, `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(retried.status).toBe(200);
    expect((await ledger.get(refused.key))?.status).toBe("pending");
    const again = await post(`/admin/retry/${refused.key}`, `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { detail: string }).detail).toContain(
      "only a refused or failed intent can be retried",
    );
    expect((await post("/admin/retry/claim-nothing", `Bearer ${TEST_ADMIN_TOKEN}`)).status).toBe(404);

    // The token never reaches the logs, even from a refused attempt.
    expect(logs.text()).not.toContain(TEST_ADMIN_TOKEN);
    expect(logs.text()).toContain("ops request without the operator token");
  });

  it("serves bull-board at /queues behind the same token (Basic or Bearer), with the keeper's queues", async () => {
    const server = await serve(TEST_ADMIN_TOKEN, { queuesWritable: true });
    const anonymous = await fetch(`${server.url}/queues/`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect((await fetch(`${server.url}/queues/api/queues`)).status).toBe(401);

    const basic = `Basic ${Buffer.from(`operator:${TEST_ADMIN_TOKEN}`).toString("base64")}`;
    const ui = await fetch(`${server.url}/queues/`, { headers: { authorization: basic } });
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain("Keeper queues");
    const api = await fetch(`${server.url}/queues/api/queues`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(api.status).toBe(200);
    const listed = (await api.json()) as { queues: Array<{ name: string }> };
    expect(listed.queues.map((q) => q.name).sort()).toEqual(Object.values(QUEUES).sort());

    // A change asked by another site's page, with the credentials the browser remembered, is refused.
    const poll = queues.find((q) => q.name === QUEUES.poll);
    const crossSite: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of crossSite) {
      const forged = await fetch(`${server.url}/queues/api/queues/${QUEUES.poll}/pause`, {
        method: "PUT",
        headers: { authorization: basic, ...headers },
      });
      expect(forged.status).toBe(403);
    }
    expect(await poll?.isPaused()).toBe(false);
    // The same from bull-board's own page (same origin) goes through: BullMQ pauses the queue.
    const own = await fetch(`${server.url}/queues/api/queues/${QUEUES.poll}/pause`, {
      method: "PUT",
      headers: { authorization: basic, origin: server.url, "sec-fetch-site": "same-origin" },
    });
    expect(own.status).toBe(200);
    expect(await poll?.isPaused()).toBe(true);
    await poll?.resume();
  });

  it("keeps bull-board read-only unless ops.queuesWritable: with the token, every change is refused and the queue unchanged", async () => {
    const server = await serve(TEST_ADMIN_TOKEN);
    const sign = queues.find((q) => q.name === QUEUES.sign);
    if (!sign) throw new Error("no sign queue");
    const delayed = await sign.add("sign", { intentKey: "claim-held-back" }, { delay: 3_600_000 });
    const countsBefore = await sign.getJobCounts();
    const auth = {
      authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      origin: server.url,
      "sec-fetch-site": "same-origin",
    };
    const api = `${server.url}/queues/api/queues/${QUEUES.sign}`;
    const changes: Array<[string, string, unknown]> = [
      ["POST", `${api}/add`, { name: "sign", data: { intentKey: "claim-forged" }, options: {} }],
      ["PUT", `${api}/${delayed.id}/promote`, undefined],
      ["PUT", `${api}/promote`, undefined],
      ["PUT", `${api}/clean/delayed`, undefined],
      ["PUT", `${api}/retry/failed`, undefined],
      ["PUT", `${api}/${delayed.id}/clean`, undefined],
      ["PUT", `${api}/pause`, undefined],
      ["PUT", `${api}/empty`, undefined],
      ["PUT", `${server.url}/queues/api/queues/pause`, undefined],
    ];
    refusals.length = 0;
    for (const [method, url, body] of changes) {
      const answer = await fetch(url, {
        method,
        headers: body === undefined ? auth : { ...auth, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(answer.status, `${method} ${url}`).toBe(405);
      expect(((await answer.json()) as { detail: string }).detail).toContain("ops.queuesWritable");
    }
    expect(refusals).toEqual(changes.map(() => "read_only"));
    expect(await sign.getJobCounts()).toEqual(countsBefore);
    expect(await (await sign.getJob(String(delayed.id)))?.getState()).toBe("delayed");
    expect(await sign.isPaused()).toBe(false);
    const waiting = await sign.getJobs(["waiting", "prioritized"]);
    expect(waiting.map((job) => job.data)).not.toContainEqual({ intentKey: "claim-forged" });
    // Reading still works, and bull-board itself shows the queues as read-only.
    const listed = await fetch(`${server.url}/queues/api/queues`, { headers: auth });
    expect(listed.status).toBe(200);
    const board = (await listed.json()) as { queues: Array<{ name: string; readOnlyMode: boolean }> };
    expect(board.queues.every((q) => q.readOnlyMode)).toBe(true);
    await delayed.remove();
  });

  it("with ops.queuesWritable, the same add through bull-board lands in the queue", async () => {
    const server = await serve(TEST_ADMIN_TOKEN, { queuesWritable: true });
    const sign = queues.find((q) => q.name === QUEUES.sign);
    const added = await fetch(`${server.url}/queues/api/queues/${QUEUES.sign}/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "sign", data: { intentKey: "claim-by-operator" }, options: {} }),
    });
    expect(added.status).toBe(200);
    const jobs = (await sign?.getJobs(["waiting", "prioritized"])) ?? [];
    const job = jobs.find((j) => (j.data as { intentKey?: string }).intentKey === "claim-by-operator");
    expect(job).toBeDefined();
    await job?.remove();
  });

  it("refuses a Host it does not answer to on the page, /queues and the operator routes: nothing read, nothing changed", async () => {
    const server = await serve(TEST_ADMIN_TOKEN);
    const pause = new PauseSwitch(ctx.redis, keys);
    const bearer = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    refusals.length = 0;
    const page = await rawRequest(`${server.url}/`, { headers: { host: `rebound.example:${server.port}` } });
    expect(page.status).toBe(421);
    expect(page.text).not.toContain("Keeper");
    const board = await rawRequest(`${server.url}/queues/api/queues`, {
      headers: { host: "rebound.example", ...bearer },
    });
    expect(board.status).toBe(421);
    expect(board.text).not.toContain(QUEUES.sign);
    const paused = await rawRequest(`${server.url}/admin/pause`, {
      method: "POST",
      headers: { host: "rebound.example", ...bearer, "content-type": "application/json" },
      body: "{}",
    });
    expect(paused.status).toBe(421);
    expect(await pause.isPaused()).toBe(false);
    expect(refusals).toEqual(["host", "host", "host"]);
    expect(logs.text()).toContain("ops request for another host name refused");
    // The same page under its own name answers.
    const own = await rawRequest(`${server.url}/`, { headers: { host: `localhost:${server.port}` } });
    expect(own.status).toBe(200);
  });

  it("forbids framing on the page, its files, /queues and /metrics, keeping the page's own policy", async () => {
    const server = await serve(TEST_ADMIN_TOKEN);
    const basic = `Basic ${Buffer.from(`operator:${TEST_ADMIN_TOKEN}`).toString("base64")}`;
    for (const path of ["/", "/status.css", "/status.js", "/queues/", "/queues/api/queues", "/metrics"]) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: basic } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
      const policy = response.headers.get("content-security-policy") ?? "";
      expect(policy.match(/frame-ancestors/g), path).toEqual(["frame-ancestors"]);
      expect(policy, path).toContain("frame-ancestors 'none'");
    }
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  });
});
