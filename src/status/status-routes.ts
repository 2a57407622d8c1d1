import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { Queue } from "bullmq";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import {
  pauseKeeper,
  resumeKeeper,
  retryKeeperIntent,
  retryRefusal,
} from "../keeper/operator/operator-actions.js";
import { LEDGER_STATUSES } from "../keeper/state/ledger.js";
import { carriesAdminToken, isCrossSiteWrite } from "../ops/admin-token.js";
import { STATUS_CSS, STATUS_JS } from "./status-assets.js";
import { renderStatusPage } from "./status-page.js";
import { type LedgerFilter, readStatusPage, type StatusPageDeps } from "./status-page-data.js";

export interface StatusPageRoutesOptions {
  deps: StatusPageDeps;
  /** The operator token (ops.adminTokenFile): without it the page is read-only and nothing below exists. */
  adminToken?: string;
  /** The queues bull-board shows at /queues (with the token only). */
  queues?: readonly Queue[];
  /** bull-board may change jobs (ops.queuesWritable); read-only otherwise. Default false. */
  queuesWritable?: boolean;
  logger: Logger;
  /** Counts: an operator action taken, a request refused (no or wrong token, another site's page). */
  onOperatorAction?: (action: "pause" | "resume" | "retry") => void;
  onRefused?: (reason: "token" | "cross_site" | "host" | "read_only") => void;
}

export const QUEUES_PATH = "/queues";

/** The page's own files only; bull-board, under /queues, brings its own scripts and is not covered. */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

class BadQuery extends Error {}

function ledgerFilterOf(query: Record<string, string | undefined>): LedgerFilter {
  const text = (name: string) => {
    const value = query[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const status = text("status");
  if (status !== undefined && !(LEDGER_STATUSES as readonly string[]).includes(status))
    throw new BadQuery(`status: expected one of ${LEDGER_STATUSES.join(", ")}`);
  const kind = text("kind");
  if (kind !== undefined && !/^[A-Za-z]{1,32}$/.test(kind))
    throw new BadQuery("kind: expected an intent kind");
  const wallet = text("wallet");
  if (wallet !== undefined && !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(wallet))
    throw new BadQuery("wallet: expected a base58 public key of 32 to 44 characters");
  const pageText = text("page") ?? "1";
  if (!/^\d{1,6}$/.test(pageText) || Number(pageText) < 1)
    throw new BadQuery("page: expected a whole number from 1");
  return {
    ...(status ? { status } : {}),
    ...(kind ? { kind } : {}),
    ...(wallet ? { wallet } : {}),
    page: Number(pageText),
  };
}

/** bull-board reads with GET only: any other method is a change, refused while the board is read-only. */
function refuseQueueWrites(logger: Logger, onRefused: StatusPageRoutesOptions["onRefused"]) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (request.method === "GET" || request.method === "HEAD") return undefined;
    logger.warn(
      { path: request.url.split("?")[0], from: request.ip },
      "a change through /queues refused: read-only",
    );
    onRefused?.("read_only");
    return reply.code(405).header("allow", "GET, HEAD").send({
      ok: false,
      detail: "refused: /queues is read-only (set ops.queuesWritable: true to change jobs from it)",
    });
  };
}

/**
 * The status page at `/` (read-only), and with an operator token: POST /admin/pause, /admin/resume,
 * /admin/retry/<intent> (bearer token) and bull-board at /queues (bearer or Basic).
 */
export async function registerStatusRoutes(app: FastifyInstance, options: StatusPageRoutesOptions) {
  const { deps, adminToken, logger } = options;
  const isAdmin = adminToken !== undefined;

  app.get("/", async (request, reply) => {
    let filter: LedgerFilter;
    try {
      filter = ledgerFilterOf(request.query as Record<string, string | undefined>);
    } catch (error) {
      if (error instanceof BadQuery)
        return reply.code(400).type("text/plain; charset=utf-8").send(error.message);
      throw error;
    }
    const data = await readStatusPage(deps, filter, nowSeconds());
    return reply
      .headers(PAGE_HEADERS)
      .type("text/html; charset=utf-8")
      .send(renderStatusPage(data, { isAdmin }));
  });
  app.get("/status.css", async (_request, reply) =>
    reply.headers(PAGE_HEADERS).type("text/css; charset=utf-8").send(STATUS_CSS),
  );
  if (!isAdmin) return;
  app.get("/status.js", async (_request, reply) =>
    reply.headers(PAGE_HEADERS).type("text/javascript; charset=utf-8").send(STATUS_JS),
  );

  const requireToken =
    (challenge: string, allowBasic: boolean) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
      const path = request.url.split("?")[0];
      if (isCrossSiteWrite(request.method, request.headers)) {
        logger.warn({ path, from: request.ip }, "ops request from another site's page refused");
        options.onRefused?.("cross_site");
        return reply.code(403).send({ ok: false, detail: "refused: a request from another site's page" });
      }
      if (carriesAdminToken(request.headers.authorization, adminToken, { allowBasic })) return undefined;
      logger.warn({ path, from: request.ip }, "ops request without the operator token");
      options.onRefused?.("token");
      return reply
        .code(401)
        .header("www-authenticate", challenge)
        .send({ ok: false, detail: "the operator token is required (Authorization: Bearer <token>)" });
    };

  await app.register(async (admin) => {
    // Bearer only: a browser never adds that header by itself, so no other site can make it send one.
    admin.addHook("onRequest", requireToken('Bearer realm="keeper"', false));
    admin.post("/admin/pause", async (request) => {
      const body = (request.body ?? {}) as { reason?: unknown };
      const reason =
        typeof body.reason === "string" && body.reason.trim() !== ""
          ? body.reason.trim().slice(0, 200)
          : "paused from the status page";
      await pauseKeeper(deps, reason, nowSeconds());
      logger.warn({ reason }, "paused by an operator (ops server)");
      options.onOperatorAction?.("pause");
      return { ok: true, detail: "paused" };
    });
    admin.post("/admin/resume", async () => {
      await resumeKeeper(deps, nowSeconds());
      logger.warn("resumed by an operator (ops server); circuit breakers reset");
      options.onOperatorAction?.("resume");
      return { ok: true, detail: "resumed; circuit breakers reset" };
    });
    admin.post("/admin/retry/:key", async (request, reply) => {
      const { key } = request.params as { key: string };
      const result = await retryKeeperIntent(deps, key);
      if (result.outcome !== "retried")
        return reply.code(result.outcome === "unknown" ? 404 : 409).send({
          ok: false,
          detail: retryRefusal(key, result),
        });
      logger.warn({ intent: key, was: result.previous.status }, "intent retried by an operator (ops server)");
      options.onOperatorAction?.("retry");
      return { ok: true, detail: `${key}: now ${result.row.status}, try ${result.row.tries}` };
    });
  });

  if (options.queues && options.queues.length > 0) {
    const writable = options.queuesWritable === true;
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(QUEUES_PATH);
    createBullBoard({
      // Read-only hides bull-board's buttons and makes its API refuse them (405).
      queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: !writable })),
      serverAdapter,
      options: { uiConfig: { boardTitle: "Keeper queues" } },
    });
    await app.register(async (board) => {
      board.addHook("onRequest", requireToken('Basic realm="keeper queues", charset="UTF-8"', true));
      // And every change is refused here too, whatever bull-board's own checks cover: its API grows
      // with each release, and a new write route must not be open by default.
      if (!writable) board.addHook("onRequest", refuseQueueWrites(logger, options.onRefused));
      await board.register(serverAdapter.registerPlugin(), { prefix: QUEUES_PATH });
    });
  }
}
