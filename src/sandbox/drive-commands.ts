import { Argument, type Command, InvalidArgumentError, Option } from "commander";
import type { z } from "zod";
import { isLoopback } from "../config/load-config.js";
import { TransientError, UsageError } from "../core/errors.js";
import {
  amountRule,
  halfSpreadRule,
  MARKET_RESULTS,
  marketIdRule,
  mintRule,
  ruleBroken,
  secondsRule,
  walletRule,
  yesPriceRule,
} from "./drive/drive-rules.js";
import { ADMIN_PREFIX } from "./http/admin.js";

/** Where the drive commands find the sandbox when neither `--url` nor KEEPER_SANDBOX_URL says. */
export const DEFAULT_SANDBOX_URL = "http://127.0.0.1:8787";

/** A commander argument parser from a drive rule: a broken rule is refused before anything is sent. */
const by =
  <T>(schema: z.ZodType<T>) =>
  (value: string): T => {
    const broken = ruleBroken(schema, value);
    if (broken !== undefined) throw new InvalidArgumentError(broken);
    return value as T;
  };

const seconds = (value: string): number => {
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  const broken = ruleBroken(secondsRule, parsed);
  if (broken !== undefined) throw new InvalidArgumentError(broken);
  return parsed;
};

const sandboxUrl = (value: string): string => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("must be a URL such as http://127.0.0.1:8787");
  }
  // The drive routes answer on loopback only: another host would refuse, or not be a sandbox at all.
  if (!isLoopback(url.href))
    throw new InvalidArgumentError("must be a sandbox on this machine (a loopback address)");
  return url.origin;
};

/** POSTs to a drive route; a refusal (4xx) is a usage error naming the field, nothing changed. */
async function drive(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(`${base}${ADMIN_PREFIX}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new TransientError(
      `no sandbox answers at ${base}: start one with \`keeper sandbox\`, or give --url`,
    );
  }
  const text = await response.text();
  let answer: Record<string, unknown> = {};
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Reported below by status.
  }
  if (response.ok) return answer;
  const error = typeof answer.error === "string" ? answer.error : `HTTP ${response.status}`;
  if (response.status === 404 && answer.error === undefined)
    throw new UsageError(`${base} is not a sandbox with drive routes (${path}: HTTP 404)`);
  if (response.status >= 400 && response.status < 500) throw new UsageError(error);
  throw new TransientError(`the sandbox at ${base} failed: ${error}`);
}

function urlOption(): Option {
  return new Option(
    "--url <url>",
    `the sandbox (default: KEEPER_SANDBOX_URL, else ${DEFAULT_SANDBOX_URL})`,
  ).argParser(sandboxUrl);
}

function baseOf(opts: { url?: string }): string {
  if (opts.url !== undefined) return opts.url;
  const fromEnv = process.env.KEEPER_SANDBOX_URL;
  if (fromEnv === undefined || fromEnv === "") return DEFAULT_SANDBOX_URL;
  try {
    return sandboxUrl(fromEnv);
  } catch (error) {
    throw new UsageError(`KEEPER_SANDBOX_URL: ${(error as Error).message}`);
  }
}

/** `keeper sandbox resolve|price|advance|fund`: drive a running sandbox for paper trading. */
export function registerDriveCommands(sandbox: Command, print: (line: string) => void): void {
  sandbox
    .command("resolve")
    .description("resolve a market of a running sandbox (yes or no), or cancel it")
    .argument("<marketId>", "the market", by(marketIdRule))
    .addArgument(new Argument("<result>", "yes, no or cancelled").choices(MARKET_RESULTS))
    .addOption(urlOption())
    .addOption(
      new Option(
        "--no-claim",
        "the market pays its winners without a claim (a claim is answered no_claim_required)",
      ),
    )
    .action(async (marketId: string, result: string, opts: { url?: string; claim?: boolean }) => {
      const answer = await drive(baseOf(opts), `/markets/${encodeURIComponent(marketId)}/resolve`, {
        result,
        ...(opts.claim === false ? { needsClaim: false } : {}),
      });
      print(
        `market ${marketId}: ${String(answer.status)}${answer.result ? ` ${String(answer.result)}` : ""}`,
      );
    });

  sandbox
    .command("price")
    .description("set a market's yes price (dollars, between 0 and 1); it holds there")
    .argument("<marketId>", "the market", by(marketIdRule))
    .argument("<price>", "the yes price, e.g. 0.72", by(yesPriceRule))
    .option(
      "--half-spread <dollars>",
      "half the gap between buy and sell prices, e.g. 0.2: the bid that far below the mark",
      by(halfSpreadRule),
    )
    .addOption(urlOption())
    .action(async (marketId: string, price: string, opts: { url?: string; halfSpread?: string }) => {
      const answer = await drive(baseOf(opts), `/markets/${encodeURIComponent(marketId)}/price`, {
        yesPrice: price,
        ...(opts.halfSpread === undefined ? {} : { halfSpread: opts.halfSpread }),
      });
      print(
        `market ${marketId}: yes buys at $${String(answer.buyYesPriceUsd)}, sells at $${String(answer.sellYesPriceUsd)}`,
      );
    });

  sandbox
    .command("advance")
    .description("move the sandbox world's clock forward")
    .argument("<seconds>", "how far, in whole seconds", seconds)
    .addOption(urlOption())
    .action(async (by: number, opts: { url?: string }) => {
      const answer = await drive(baseOf(opts), "/clock/advance", { seconds: by });
      const claims = Number(answer.serviceClaims ?? 0);
      print(
        `sandbox time is now ${String(answer.now)}${claims > 0 ? `; the service claimed ${claims} winning position(s)` : ""}`,
      );
    });

  sandbox
    .command("fund")
    .description("give a wallet tokens (default USDC) or SOL on the sandbox's chain")
    .argument("<wallet>", "the wallet's public key", by(walletRule))
    .argument("<amount>", "whole tokens, e.g. 250 or 0.5", by(amountRule))
    .addOption(
      new Option("--mint <mint>", "a mint address, a symbol (USDC, USDT, KEEP, ...) or SOL for native SOL")
        .default("USDC")
        .argParser(by(mintRule)),
    )
    .addOption(urlOption())
    .action(async (wallet: string, amount: string, opts: { mint: string; url?: string }) => {
      const answer = await drive(baseOf(opts), "/fund", { wallet, amount, mint: opts.mint });
      print(
        `funded ${wallet} with ${amount} ${String(answer.symbol)} (${String(answer.mint)}): balance ${String(answer.balanceRaw)} raw units`,
      );
    });
}
