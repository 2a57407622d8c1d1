import { PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ALLOWED_PROGRAMS,
  isTokenProgram,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from "../../src/chain/programs.js";

describe("programs", () => {
  it("allows by default only distinct, well-formed program addresses", () => {
    for (const id of DEFAULT_ALLOWED_PROGRAMS) {
      expect(new PublicKey(id).toBase58()).toBe(id);
    }
    expect(new Set(DEFAULT_ALLOWED_PROGRAMS).size).toBe(DEFAULT_ALLOWED_PROGRAMS.length);
  });

  it("knows SPL Token and Token-2022 as token programs, nothing else", () => {
    expect(isTokenProgram(TOKEN_PROGRAM)).toBe(true);
    expect(isTokenProgram(TOKEN_2022_PROGRAM)).toBe(true);
    expect(isTokenProgram(PublicKey.default.toBase58())).toBe(false);
  });
});
