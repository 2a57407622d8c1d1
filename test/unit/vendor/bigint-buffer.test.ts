import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

// The stand-in installed in place of bigint-buffer (package.json "overrides"), through the path
// @solana/spl-token's layouts load it by.
const layoutUtils = createRequire(import.meta.url).resolve("@solana/buffer-layout-utils");
const bigintBuffer = createRequire(layoutUtils)("bigint-buffer") as {
  toBigIntLE(buf: Buffer): bigint;
  toBigIntBE(buf: Buffer): bigint;
  toBufferLE(num: bigint, width: number): Buffer;
  toBufferBE(num: bigint, width: number): Buffer;
};

describe("bigint-buffer stand-in (no native binding)", () => {
  it.each([
    [0n, 8],
    [1n, 8],
    [255n, 1],
    [2n ** 63n + 5n, 8],
    [2n ** 64n - 1n, 8],
    [2n ** 100n + 7n, 16],
    [123_456_789n, 32],
  ])("round-trips %s in %i bytes, both byte orders, as Node's own readers read it", (value, width) => {
    const le = bigintBuffer.toBufferLE(value, width);
    const be = bigintBuffer.toBufferBE(value, width);
    expect(le.length).toBe(width);
    expect(be.length).toBe(width);
    expect(bigintBuffer.toBigIntLE(le)).toBe(value);
    expect(bigintBuffer.toBigIntBE(be)).toBe(value);
    expect(Buffer.from(le).reverse().equals(be)).toBe(true);
    if (width === 8) {
      expect(le.readBigUInt64LE()).toBe(value);
      expect(be.readBigUInt64BE()).toBe(value);
    }
  });

  it("keeps the low bytes of a value wider than the width, and reads an empty buffer as 0", () => {
    expect(bigintBuffer.toBufferLE(2n ** 64n + 3n, 8).readBigUInt64LE()).toBe(3n);
    expect(bigintBuffer.toBigIntLE(Buffer.alloc(0))).toBe(0n);
  });

  it("leaves the input buffer as it was", () => {
    const buf = Buffer.from([1, 2, 3]);
    bigintBuffer.toBigIntLE(buf);
    expect([...buf]).toEqual([1, 2, 3]);
  });
});
