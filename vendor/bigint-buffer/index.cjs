// Stand-in for the bigint-buffer package, which @solana/spl-token reaches through
// @solana/buffer-layout-utils. Upstream's native binding has an unfixed buffer overflow
// (CVE-2025-3194) and its fallback prints a warning on every start; this is the same API in plain
// JavaScript. Values wider than `width` bytes keep their low bytes (as a fixed-width integer would).

function toBigIntLE(buf) {
  return toBigIntBE(Buffer.from(buf).reverse());
}

function toBigIntBE(buf) {
  const hex = Buffer.from(buf).toString("hex");
  return hex.length === 0 ? 0n : BigInt(`0x${hex}`);
}

function toBufferBE(num, width) {
  const out = Buffer.alloc(width);
  let rest = BigInt.asUintN(width * 8, BigInt(num));
  for (let i = width - 1; i >= 0; i -= 1) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

function toBufferLE(num, width) {
  return toBufferBE(num, width).reverse();
}

module.exports = { toBigIntLE, toBigIntBE, toBufferLE, toBufferBE };
