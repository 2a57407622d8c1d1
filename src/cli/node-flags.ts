/**
 * The Node flags Keeper runs with: the image's entrypoint, `bin/keeper.js`'s first line, `npm start`
 * and the benchmark's keeper all pass these (a unit test checks that they agree).
 *
 * `--max-semi-space-size=8`: Node 24 lets the young generation grow to 32 MB a semi-space, and under a
 * sweep's steady allocation the old generation then grew with it: a keeper of 10,000 wallets reached
 * 516 MB RSS for 94 MB of heap in use. With 8 MB semi-spaces the same keeper stays near 250-300 MB
 * with the same claim latency and CPU (bench/README.md). V8 reads it only at start-up, so it cannot
 * be set from inside the process.
 */
export const KEEPER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=8"];

/** Which of Keeper's flags this process was started without (on the command line or in NODE_OPTIONS). */
export function missingNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split("=")[0]);
  return KEEPER_NODE_FLAGS.filter((flag) => !given.includes(flag.split("=")[0]));
}
