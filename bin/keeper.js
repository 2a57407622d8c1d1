#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=50 --no-flush-bytecode
// Entry point for `npx keeper`: runs the TypeScript CLI through tsx so a checkout needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
