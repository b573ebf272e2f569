import { describe, expect, test } from "bun:test";
import { SignJWT, jwtVerify } from "jose";
import { JwtSigner, type SessionClaims } from "./jwt.ts";

const SECRET = "k".repeat(40);
const now = Math.floor(Date.now() / 1000);
const claims = (over: Partial<SessionClaims> = {}): SessionClaims => ({
  sub: "alice",
  username: "alice",
  admin: false,
  jti: "j-1",
  iat: now,
  exp: now + 3600,
  provider: "internal",
  ...over,
});

describe("JwtSigner (HS256)", () => {
  test("a token we sign verifies with jose, and one jose signs verifies with us", async () => {
    const s = new JwtSigner(SECRET);
    const token = await s.sign(claims({ admin: true }));
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(SECRET), { algorithms: ["HS256"] });
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ sub: "alice", username: "alice", admin: true, jti: "j-1" });

    const foreign = await new SignJWT({ ...claims({ jti: "j-2" }) }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(SECRET));
    const r = await s.verify(foreign);
    expect(r.ok && r.value.jti).toBe("j-2");
  });

  test.each([
    ["wrong secret", async (t: string) => t, new JwtSigner("x".repeat(40)), "bad_signature"],
    ["tampered payload", async (t: string) => t.split(".").map((p, i) => (i === 1 ? Buffer.from(JSON.stringify(claims({ admin: true }))).toString("base64url") : p)).join("."), undefined, "bad_signature"],
    ["alg none", async (t: string) => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${t.split(".")[1]}.`, undefined, "unsupported_alg"],
    ["two parts", async (t: string) => t.split(".").slice(0, 2).join("."), undefined, "malformed"],
    ["garbage", async () => "a.b.c", undefined, "malformed"],
  ])("rejects %s", async (_n, mutate, verifier, reason) => {
    const s = new JwtSigner(SECRET);
    const t = await mutate(await s.sign(claims()));
    const r = await (verifier ?? s).verify(t);
    expect(r.ok ? "accepted" : r.reason).toBe(reason);
  });

  test("expired tokens are rejected (beyond the 30 s leeway)", async () => {
    const s = new JwtSigner(SECRET);
    const t = await s.sign(claims({ iat: now - 7200, exp: now - 60 }));
    const r = await s.verify(t);
    expect(r.ok ? "accepted" : r.reason).toBe("expired");
  });

  test("an empty secret is refused", () => {
    expect(() => new JwtSigner("")).toThrow();
  });
});
