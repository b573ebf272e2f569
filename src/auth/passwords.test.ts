import { describe, expect, test } from "bun:test";
import {
  LEGACY_DEFAULT_DIGEST,
  hashPassword,
  isBcryptHash,
  isSha256Hex,
  sha256Hex,
  verifyPassword,
} from "./passwords.ts";

describe("passwords", () => {
  test("the legacy default digest is SHA-256 of HOMER's historical default", () => {
    expect(LEGACY_DEFAULT_DIGEST).toBe(sha256Hex("sipcapture"));
    expect(LEGACY_DEFAULT_DIGEST).toMatch(/^[0-9a-f]{64}$/);
  });

  test("new hashes are bcrypt and verify", async () => {
    const h = await hashPassword("correct horse");
    expect(isBcryptHash(h)).toBe(true);
    expect(await verifyPassword("correct horse", h)).toBe(true);
    expect(await verifyPassword("correct horsE", h)).toBe(false);
  });

  test("bcrypt $2a$/$2b$/$2y$ spellings of one hash all verify", async () => {
    const h = await hashPassword("s3cret-pass");
    const tail = h.slice(4);
    for (const p of ["$2a$", "$2b$", "$2y$"]) {
      expect(await verifyPassword("s3cret-pass", p + tail)).toBe(true);
      expect(await verifyPassword("wrong", p + tail)).toBe(false);
    }
  });

  test.each([
    ["lower-case digest", (pw: string) => sha256Hex(pw), true],
    ["upper-case digest", (pw: string) => sha256Hex(pw).toUpperCase(), true],
    ["digest of another password", () => sha256Hex("other"), false],
    ["empty hash", () => "", false],
    ["garbage", () => "not-a-hash", false],
    ["malformed bcrypt", () => "$2b$10$short", false],
  ])("SHA-256 legacy: %s", async (_name, make, expected) => {
    expect(await verifyPassword("pa55word!", make("pa55word!"))).toBe(expected);
  });

  test("the well-known default digest never matches, even with the right password", async () => {
    expect(await verifyPassword("sipcapture", LEGACY_DEFAULT_DIGEST)).toBe(false);
  });

  test("isSha256Hex wants exactly 64 lower-case hex characters", () => {
    expect(isSha256Hex("a".repeat(64))).toBe(true);
    expect(isSha256Hex("A".repeat(64))).toBe(false);
    expect(isSha256Hex("a".repeat(63))).toBe(false);
  });
});
