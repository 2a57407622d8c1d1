import { recordTestOutput } from "../helpers/test-secrets.js";
// Every keypair made in a test process is registered for the secret scan (see the module).
import "./register-test-keys.js";

// Everything a test process writes to stdout or stderr also goes to the suite's log directory.
for (const [name, stream] of [
  ["stdout", process.stdout],
  ["stderr", process.stderr],
] as const) {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    recordTestOutput(
      name,
      typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"),
    );
    return write(chunk, ...rest);
  }) as typeof stream.write;
}
