/**
 * What the sandbox's check of its own answers against /openapi.json costs: requests a second of one
 * sandbox with the check on and off, over the same mix of reads (an events page with its markets, a
 * wallet's positions, one market, a wallet's history), a fixed number of requests at a fixed
 * concurrency, on loopback. Prints a table; not a test.
 *
 *   npx tsx bench/response-check.ts [--requests N] [--concurrency C] [--rounds R]
 */
import { parseArgs } from "node:util";
import { ResponseCheck } from "../src/sandbox/http/response-check.js";
import { startSandbox } from "../src/sandbox/index.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    rounds: { type: "string", default: "3" },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

/**
 * Requests a second, and the process's CPU time a request (client and server share the process, so
 * the client's part is in both runs alike): on a shared machine the CPU figure is the steadier one.
 */
async function measure(check: "log" | false): Promise<{ rps: number; cpuMicros: number; validated: number }> {
  const sandbox = await startSandbox({ port: 0, rateLimit: false, chain: false, checkResponses: check });
  try {
    const wallet = sandbox.wallets[0] ?? "";
    const market = sandbox.world.markets[0]?.marketId ?? "";
    const paths = [
      "/prediction/v1/events?includeMarkets=true&end=20",
      `/prediction/v1/positions?ownerPubkey=${wallet}`,
      `/prediction/v1/markets/${market}`,
      `/prediction/v1/history?ownerPubkey=${wallet}`,
    ];
    const headers = { "x-api-key": sandbox.apiKey };
    let next = 0;
    const worker = async () => {
      while (next < requests) {
        const path = paths[next++ % paths.length];
        const response = await fetch(`${sandbox.url}${path}`, { headers });
        if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
        await response.arrayBuffer();
      }
    };
    // A warm-up pass compiles the validators and warms the JIT before the clock starts.
    for (const path of paths) await (await fetch(`${sandbox.url}${path}`, { headers })).arrayBuffer();
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    return {
      rps: requests / seconds,
      cpuMicros: (used.user + used.system) / requests,
      validated: sandbox.responseCheck?.validated ?? 0,
    };
  } finally {
    await sandbox.close();
  }
}

/** The check alone, on each read's body: microseconds a response, with the body's size beside it. */
async function checkAlone(): Promise<string[]> {
  const sandbox = await startSandbox({ port: 0, rateLimit: false, chain: false, checkResponses: false });
  const check = new ResponseCheck();
  const out = ["| read | body | check |", "| --- | --- | --- |"];
  try {
    const wallet = sandbox.wallets[0] ?? "";
    const reads: Array<[string, string]> = [
      ["/prediction/v1/events", "/prediction/v1/events?includeMarkets=true&end=20"],
      ["/prediction/v1/positions", `/prediction/v1/positions?ownerPubkey=${wallet}`],
      ["/prediction/v1/markets/:marketId", `/prediction/v1/markets/${sandbox.world.markets[0]?.marketId}`],
      ["/prediction/v1/history", `/prediction/v1/history?ownerPubkey=${wallet}`],
    ];
    for (const [route, path] of reads) {
      const body = await (
        await fetch(`${sandbox.url}${path}`, { headers: { "x-api-key": sandbox.apiKey } })
      ).text();
      check.check("GET", route, 200, body);
      const times = 500;
      const started = performance.now();
      for (let i = 0; i < times; i++) check.check("GET", route, 200, body);
      const micros = ((performance.now() - started) * 1000) / times;
      out.push(`| ${route} | ${(body.length / 1024).toFixed(0)} KiB | ${micros.toFixed(0)} µs |`);
    }
  } finally {
    await sandbox.close();
  }
  return out;
}

const rows: string[] = [
  "| round | check off: req/s, CPU a request | check on: req/s, CPU a request | CPU cost |",
  "| --- | --- | --- | --- |",
];
for (let round = 1; round <= rounds; round++) {
  const off = await measure(false);
  const on = await measure("log");
  const cost = ((on.cpuMicros / off.cpuMicros - 1) * 100).toFixed(1);
  const figures = (m: { rps: number; cpuMicros: number }) =>
    `${m.rps.toFixed(0)}, ${m.cpuMicros.toFixed(0)} µs`;
  rows.push(`| ${round} | ${figures(off)} | ${figures(on)} (${on.validated} checked) | ${cost} % |`);
}
console.log(`${requests} requests a run, ${concurrency} at a time, chain off, no rate limit`);
for (const row of rows) console.log(row);
for (const row of await checkAlone()) console.log(row);
