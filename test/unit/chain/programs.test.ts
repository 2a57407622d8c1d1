import { PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { DEFAULT_PAYOUT_MINTS } from "../../../src/chain/inflow-rules.js";
import {
  DEFAULT_ALLOWED_PROGRAMS,
  isTokenProgram,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from "../../../src/chain/programs.js";

describe("programs", () => {
  it("allows by default only distinct, well-formed program addresses", () => {
    for (const id of DEFAULT_ALLOWED_PROGRAMS) {
      expect(new PublicKey(id).toBase58()).toBe(id);
    }
    expect(new Set(DEFAULT_ALLOWED_PROGRAMS).size).toBe(DEFAULT_ALLOWED_PROGRAMS.length);
  });

  it("pays out by default in distinct, well-formed mint addresses", () => {
    expect(DEFAULT_PAYOUT_MINTS.length).toBeGreaterThan(0);
    for (const mint of DEFAULT_PAYOUT_MINTS) {
      expect(new PublicKey(mint).toBase58()).toBe(mint);
    }
    expect(new Set(DEFAULT_PAYOUT_MINTS).size).toBe(DEFAULT_PAYOUT_MINTS.length);
  });

  it("knows SPL Token and Token-2022 as token programs, nothing else", () => {
    expect(isTokenProgram(TOKEN_PROGRAM)).toBe(true);
    expect(isTokenProgram(TOKEN_2022_PROGRAM)).toBe(true);
    expect(isTokenProgram(PublicKey.default.toBase58())).toBe(false);
  });
});
