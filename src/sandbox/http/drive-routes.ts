import type { FastifyInstance, FastifyReply } from "fastify";
import type { z } from "zod";
import type { SandboxDriver } from "../drive/drive.js";
import { advanceBody, fundBody, marketIdRule, priceBody, resolveBody } from "../drive/drive-rules.js";
import { SandboxError } from "../world/errors.js";
import { describeIssue } from "./validate.js";

/** The body as the schema reads it, or a 400 `{ error: "<field>: <rule>" }` already sent. */
function parsed<S extends z.ZodType>(
  schema: S,
  input: unknown,
  reply: FastifyReply,
): z.output<S> | undefined {
  const result = schema.safeParse(input ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const { param, rule } = issue ? describeIssue(issue, "body") : { param: "body", rule: "is invalid" };
  void reply.code(400).send({ error: `${param}: ${rule}` });
  return undefined;
}

function marketIdOf(params: unknown, reply: FastifyReply): string | undefined {
  const marketId = (params as { marketId?: string }).marketId ?? "";
  const result = marketIdRule.safeParse(marketId);
  if (result.success) return result.data;
  void reply.code(400).send({ error: `marketId: ${result.error.issues[0]?.message ?? "is invalid"}` });
  return undefined;
}

/** Runs a change; a refusal of the world becomes its status and `{ error }`, nothing changed. */
async function act(reply: FastifyReply, change: () => unknown) {
  try {
    return change();
  } catch (error) {
    if (error instanceof SandboxError) return reply.code(error.status).send({ error: error.message });
    throw error;
  }
}

/**
 * The levers of paper trading, under the admin prefix (loopback only, no API key): resolve or cancel a
 * market, set its price, move the world's clock on, and give a wallet tokens or SOL on the local chain.
 */
export function registerDriveRoutes(admin: FastifyInstance, driver: SandboxDriver): void {
  admin.post("/markets/:marketId/resolve", async (request, reply) => {
    const marketId = marketIdOf(request.params, reply);
    const body = marketId === undefined ? undefined : parsed(resolveBody, request.body, reply);
    if (marketId === undefined || body === undefined) return reply;
    return act(reply, () =>
      driver.resolve(
        marketId,
        body.result,
        body.needsClaim === undefined ? {} : { needsClaim: body.needsClaim },
      ),
    );
  });
  admin.post("/markets/:marketId/price", async (request, reply) => {
    const marketId = marketIdOf(request.params, reply);
    const body = marketId === undefined ? undefined : parsed(priceBody, request.body, reply);
    if (marketId === undefined || body === undefined) return reply;
    return act(reply, () => driver.setPrice(marketId, body.yesPrice, body.halfSpread));
  });
  admin.post("/clock/advance", async (request, reply) => {
    const body = parsed(advanceBody, request.body, reply);
    if (body === undefined) return reply;
    return act(reply, () => driver.advance(body.seconds));
  });
  admin.post("/fund", async (request, reply) => {
    const body = parsed(fundBody, request.body, reply);
    if (body === undefined) return reply;
    return act(reply, () => driver.fund(body.wallet, body.amount, body.mint));
  });
}
