import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { PauseSwitch } from "../../src/keeper/operator/pause.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { launchChromium } from "../helpers/browser.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { testRedis } from "../helpers/redis.js";
import { TEST_ADMIN_TOKEN } from "../helpers/test-secrets.js";

/** Where the screenshots land (gitignored), stable so a person can open them after a run. */
const SCREENSHOT = resolve("test-results/status-page.png");
/** The desktop's fleet section alone: the totals and the charts. */
const FLEET_SCREENSHOT = resolve("test-results/status-page-fleet.png");
const PHONE_SCREENSHOT = resolve("test-results/status-page-phone.png");
/** The phone's first screen only: what a glance sees. */
const PHONE_FIRST_SCREEN = resolve("test-results/status-page-phone-first-screen.png");
/** The phone's view of the first wallet: its totals and its positions as cards. */
const PHONE_WALLET = resolve("test-results/status-page-phone-wallet.png");
/** A common phone's CSS width and height. */
const PHONE = { width: 390, height: 844 };
const QUEUES_SCREENSHOT = resolve("test-results/queues.png");

/** What an element says (its text content; Playwright's, not the DOM's). */
async function textOf(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? "").trim();
}

/** Dollars and cents, e.g. "$68.79" or "-$1,204.50". */
const CENTS = /^[-+]?\$\d{1,3}(,\d{3})*\.\d{2}$/;

/**
 * What a trader must see without scrolling sideways or hovering: the fleet's totals in dollars and
 * cents (the exact figure on hover), a chart drawn, and each position's realizable pnl, in view.
 */
async function showsAtAGlance(page: Page, width: string): Promise<void> {
  const totals = page.locator("#fleet-totals");
  await totals.waitFor({ state: "visible" });
  for (const key of ["value", "realizable", "claimed", "exits", "fees", "awaiting"]) {
    const value = totals.locator(`[data-figure="${key}"] .value .money`);
    expect(await value.isVisible(), `${width}: total ${key}`).toBe(true);
    expect(await textOf(value), `${width}: total ${key}`).toMatch(CENTS);
    expect(await value.getAttribute("title"), `${width}: total ${key}`).toMatch(/^-?\$\d+\.\d{2,6}$/);
  }
  // The claims that landed today are in the fleet's total and in today's bar.
  expect(await textOf(totals.locator('[data-figure="claimed"] .value'))).not.toBe("$0.00");
  const chart = page.locator("svg#chart-activity");
  expect(await chart.isVisible(), `${width}: chart`).toBe(true);
  expect((await chart.boundingBox())?.height ?? 0).toBeGreaterThan(50);
  expect(await chart.locator("rect.bar[height]").count()).toBeGreaterThan(0);
  expect(
    await page.locator("svg#chart-value circle.point").count(),
    `${width}: value samples`,
  ).toBeGreaterThan(0);
  const rows = page.locator("tr[data-position]");
  expect(await rows.count()).toBeGreaterThan(0);
  for (const row of await rows.all()) {
    const pnl = row.locator("td.realizable-pnl");
    await pnl.scrollIntoViewIfNeeded();
    expect(
      await pnl.isVisible(),
      `${width}: realizable pnl of ${await row.getAttribute("data-position")}`,
    ).toBe(true);
    expect(await textOf(pnl)).toMatch(
      /^([-+]?\$[\d,]+\.\d{2} [-+]?[\d.]+ %|\$0\.00 0\.00 %|no bid|awaiting result)$/,
    );
  }
}

/** Sum of a metric's samples whose line starts with `prefix` (all label sets). */
function metricSum(text: string, prefix: string): number {
  return text
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
}

/**
 * The status page in a real browser (Debian's chromium through playwright-core) against a whole
 * keeper on the sandbox: a claim confirmed on the local chain shows as confirmed; Pause from the page
 * stops polling, Resume starts it again; bull-board answers behind the token.
 */
describe("status page in a browser", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const before = new Map<string, bigint>();

  beforeAll(async () => {
    // The browser first: without chromium the test fails here, saying how to install it.
    browser = await launchChromium();
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-status-page");
    for (const wallet of sandbox.wallets)
      before.set(wallet, await usdcBalance(sandbox, wallet, sandbox.usdcMint));
    const tokenFile = join(await mkdtemp(join(tmpdir(), "keeper-token-")), "admin-token");
    await writeFile(tokenFile, `${TEST_ADMIN_TOKEN}\n`, { mode: 0o600 });
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        ops: `  adminTokenFile: ${tokenFile}`,
        // Exit rules far from any position's figures: the page names the nearest, nothing is closed.
        extra:
          "strategies:\n  - name: auto-claim\n  - name: exit-rules\n    takeProfitPct: 5000\n    stopLossPct: 99\n",
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
    page = await browser.context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  const opsUrl = () => keeper.ops?.url ?? "";

  it("shows each claim confirmed once it landed, matching the wallets' balances on chain", async () => {
    const winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(0);
    const rows = await eventually(
      "every winning position's claim confirmed",
      async () => {
        const claims = (await keeper.ledger.list()).filter((r) => r.kind === "claim");
        return winners.every((p) =>
          claims.some((r) => r.key === `claim-${p.pubkey}` && r.status === "confirmed"),
        )
          ? claims
          : undefined;
      },
      90_000,
    );
    // What landed: each wallet's USDC grew by exactly the claims the ledger records as confirmed.
    for (const wallet of sandbox.wallets) {
      const paid = rows
        .filter((r) => r.wallet === wallet && r.status === "confirmed")
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      const now = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
      expect(now - (before.get(wallet) ?? 0n)).toBe(paid);
    }

    await page.goto(`${opsUrl()}/`);
    expect(await page.title()).toBe("Keeper status");
    await expect.poll(() => textOf(page.locator("#mode"))).toBe("mode live");
    expect(await textOf(page.locator("#paused"))).toBe("running");
    for (const p of winners) {
      const row = page.locator(`#ledger tr[data-key="claim-${p.pubkey}"]`);
      expect(await textOf(row.locator("td.status"))).toBe("confirmed");
      const amount = rows.find((r) => r.key === `claim-${p.pubkey}`)?.amountMicroUsd ?? "";
      expect(await textOf(row)).toContain(`$${(Number(amount) / 1e6).toFixed(2)}`);
    }
    // Open positions name the exit rule nearest to firing in one unit, its figures on hover.
    const exits = await page.locator("td.exit").allTextContents();
    expect(
      exits.filter((text) => /^(take-profit|stop-loss) in [+-][\d.]+ %$/.test(text)).length,
    ).toBeGreaterThan(0);
    expect(await page.locator("td.exit").first().getAttribute("title")).toMatch(
      /^(take-profit|stop-loss): realizable pnl -?[\d.]+% \((>= 5000|<= -99)%\)$/,
    );
    // Each wallet is there with its last poll.
    for (const wallet of sandbox.wallets)
      expect(await textOf(page.locator(`article[data-wallet="${wallet}"] .last-poll`))).toMatch(/ago\)$/);
    await expect.poll(() => textOf(page.locator("#needs-look"))).toContain("none");

    await mkdir(resolve("test-results"), { recursive: true });
    await showsAtAGlance(page, "desktop");
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.locator("#fleet").screenshot({ path: FLEET_SCREENSHOT });
    process.stdout.write(`status page screenshots: ${SCREENSHOT}, ${FLEET_SCREENSHOT}\n`);
  }, 150_000);

  it("reads at a glance on a phone: the totals, a chart and every position's realizable pnl, nothing sideways", async () => {
    const phone = await browser.context.newPage();
    try {
      await phone.setViewportSize(PHONE);
      await phone.goto(`${opsUrl()}/`);
      await showsAtAGlance(phone, "phone");
      // The page fits the phone's width: nothing scrolls sideways but inside its own box.
      // What sticks out, named in the failure.
      const wide = await phone.evaluate<string[]>(
        `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > ${PHONE.width} && !e.closest("table:not(.cards)")).slice(0, 5).map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`,
      );
      expect(
        await phone.evaluate<number>("document.documentElement.scrollWidth"),
        wide.join("; "),
      ).toBeLessThanOrEqual(PHONE.width);
      // Each position is a card: its realizable pnl sits inside the screen's width.
      for (const cell of await phone.locator("tr[data-position] td.realizable-pnl").all()) {
        const box = await cell.boundingBox();
        expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
        expect((box?.x ?? 0) + (box?.width ?? PHONE.width + 1)).toBeLessThanOrEqual(PHONE.width);
      }
      await phone.screenshot({ path: PHONE_SCREENSHOT, fullPage: true });
      await phone.evaluate("window.scrollTo(0, 0)");
      await phone.screenshot({ path: PHONE_FIRST_SCREEN });
      await phone.locator("article.wallet").first().screenshot({ path: PHONE_WALLET });
      process.stdout.write(
        `status page phone screenshots: ${PHONE_SCREENSHOT}, ${PHONE_FIRST_SCREEN}, ${PHONE_WALLET}\n`,
      );
    } finally {
      await phone.close();
    }
  }, 60_000);

  it("pauses from the page with the operator token: no poll completes after the next tick; resumes", async () => {
    const pause = new PauseSwitch(keeper.redis, keeper.keys);
    await page.goto(`${opsUrl()}/`);
    // Without the token the click is refused by the page itself.
    await page.locator("#admin-token").fill("");
    await page.locator('button[data-action="pause"]').click();
    await expect.poll(() => textOf(page.locator("#admin-message"))).toBe("enter the operator token first");
    expect(await pause.isPaused()).toBe(false);

    await page.locator("#admin-token").fill(TEST_ADMIN_TOKEN);
    await page.locator("#pause-reason").fill("checked from the browser test");
    await page.locator('button[data-action="pause"]').click();
    await page.locator('button[data-action="resume"]').waitFor({ timeout: 30_000 });
    expect(await textOf(page.locator("#paused"))).toContain("PAUSED since");
    expect(await textOf(page.locator("#paused"))).toContain("checked from the browser test");
    expect(await pause.status()).toMatchObject({ paused: true, reason: "checked from the browser test" });

    // A poll already running when the switch flipped may finish; one picked up after it skips.
    await eventually("no poll running", async () =>
      (await keeper.queues.poll.getJobCounts("active")).active === 0 ? true : undefined,
    );
    const metrics = () => keeper.metrics.render();
    const completed = metricSum(await metrics(), "keeper_poll_duration_seconds_count");
    const lastPolls = await lastPollsOf(keeper.redis, keeper.keys);
    const skipped = metricSum(await metrics(), 'keeper_poll_skipped_total{reason="paused"}');
    // Two more scheduler ticks skipped as paused: at least one whole tick after the counts above.
    await eventually("two scheduler ticks skipped as paused", async () =>
      metricSum(await metrics(), 'keeper_poll_skipped_total{reason="paused"}') >= skipped + 2
        ? true
        : undefined,
    );
    expect(metricSum(await metrics(), "keeper_poll_duration_seconds_count")).toBe(completed);
    expect(await lastPollsOf(keeper.redis, keeper.keys)).toEqual(lastPolls);
    await page.reload();
    expect(await textOf(page.locator("#paused"))).toContain("PAUSED");

    await page.locator('button[data-action="resume"]').click();
    await page.locator('button[data-action="pause"]').waitFor({ timeout: 30_000 });
    expect(await textOf(page.locator("#paused"))).toBe("running");
    expect(await pause.isPaused()).toBe(false);
    const counted = await metrics();
    expect(counted).toContain('keeper_operator_actions_total{action="pause"} 1');
    expect(counted).toContain('keeper_operator_actions_total{action="resume"} 1');
    await eventually("a poll completes again", async () =>
      metricSum(await metrics(), "keeper_poll_duration_seconds_count") > completed ? true : undefined,
    );
  }, 120_000);

  it("opens bull-board at /queues with the token as the Basic password, and not without it", async () => {
    // Without credentials the browser gets the 401 and its Basic challenge (headless: no prompt).
    const refused = await browser.context.request.get(`${opsUrl()}/queues/`);
    expect(refused.status()).toBe(401);
    expect(refused.headers()["www-authenticate"]).toMatch(/^Basic realm=/);
    expect(await keeper.metrics.render()).toMatch(
      /keeper_ops_requests_refused_total\{reason="token"\} [1-9]/,
    );

    const board = await launchChromium({
      httpCredentials: { username: "operator", password: TEST_ADMIN_TOKEN },
    });
    try {
      const queuesPage = await board.context.newPage();
      const answer = await queuesPage.goto(`${opsUrl()}/queues/`);
      expect(answer?.status()).toBe(200);
      // The UI lists the keeper's queues once its own API calls (same token) answered.
      for (const name of ["poll", "actions", "sign"])
        await queuesPage.getByRole("link", { name, exact: true }).first().waitFor({ timeout: 30_000 });
      // A queue's completed jobs, read from BullMQ 6 through bull-board's API: the claims' sign jobs.
      await queuesPage.goto(`${opsUrl()}/queues/queue/sign?status=completed`);
      await queuesPage
        .getByText(/sign-claim-/)
        .first()
        .waitFor({ timeout: 30_000 });
      await queuesPage.screenshot({ path: QUEUES_SCREENSHOT, fullPage: true });
      process.stdout.write(`bull-board screenshot: ${QUEUES_SCREENSHOT}\n`);
    } finally {
      await board.close();
    }
  }, 90_000);
});
