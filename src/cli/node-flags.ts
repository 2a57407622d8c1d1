/**
 * The Node flags Keeper runs with: the image's entrypoint, `bin/keeper.js`'s first line, `npm start`
 * and the benchmark's keeper all pass these (a unit test checks that they agree).
 *
 * Node's own sizing lets garbage pile up: a keeper of 10,000 wallets reached 516 MB RSS for 94 MB of
 * heap in use (bench/README.md). Neither flag caps the heap, so a fleet larger than measured grows
 * its heap as it needs instead of stopping:
 * - `--max-semi-space-size=8`: Node 24 grows the young generation to 32 MB a semi-space; 8 MB held
 *   the same keeper to 433 MB. V8 reads it only at start-up, so it cannot be set from inside.
 * - `--heap-growing-percent=50`: the next full collection comes when the heap has grown by half over
 *   what the last one kept, not by up to four times: 248 MB RSS for the same keeper.
 */
export const KEEPER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=8", "--heap-growing-percent=50"];

/** Which of Keeper's flags this process was started without (on the command line or in NODE_OPTIONS). */
export function missingNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split("=")[0]);
  return KEEPER_NODE_FLAGS.filter((flag) => !given.includes(flag.split("=")[0]));
}
