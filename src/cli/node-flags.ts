/**
 * The Node flags Keeper runs with: the image's entrypoint, `bin/keeper.js`'s first line, `npm start`
 * and the benchmark's keeper all pass these (a unit test checks that they agree). V8 reads them only
 * at start-up, so they cannot be set from inside.
 *
 * Node's own sizing lets garbage pile up: a keeper of 10,000 wallets reached 516 MB RSS for 94 MB of
 * heap in use (bench/README.md). Neither of the first two flags caps the heap, so a fleet larger than
 * measured grows its heap as it needs instead of stopping:
 * - `--max-semi-space-size=8`: Node 24 grows the young generation to 32 MB a semi-space; 8 MB held
 *   the same keeper to 433 MB.
 * - `--heap-growing-percent=50`: the next full collection comes when the heap has grown by half over
 *   what the last one kept, not by up to four times: 248 MB RSS for the same keeper.
 * - `--no-flush-bytecode`: V8 drops the bytecode of a function unused over six full collections (and
 *   with it what it learnt and optimized), and a keeper of 10,000 wallets made 14 in the 300 s after a
 *   burst: code only claims run (the signer's checks, the builds) was compiled again by the next
 *   burst. Kept, a burst at 3 a.m. runs on the code the last one left. 6-13 MB more at the peak
 *   (bench/README.md).
 */
export const KEEPER_NODE_FLAGS: readonly string[] = [
  "--max-semi-space-size=8",
  "--heap-growing-percent=50",
  "--no-flush-bytecode",
];

/** Which of Keeper's flags this process was started without (on the command line or in NODE_OPTIONS). */
export function missingNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split("=")[0]);
  return KEEPER_NODE_FLAGS.filter((flag) => !given.includes(flag.split("=")[0]));
}
