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
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(SECRET), {
      algorithms: ["HS256"],
    });
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ sub: "alice", username: "alice", admin: true, jti: "j-1" });

    const foreign = await new SignJWT({ ...claims({ jti: "j-2" }) })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(SECRET));
    const r = await s.verify(foreign);
    expect(r.ok && r.value.jti).toBe("j-2");
  });

  test.each([
    ["wrong secret", async (t: string) => t, new JwtSigner("x".repeat(40)), "bad_signature"],
    [
      "tampered payload",
      async (t: string) =>
        t
          .split(".")
          .map((p, i) => (i === 1 ? Buffer.from(JSON.stringify(claims({ admin: true }))).toString("base64url") : p))
          .join("."),
      undefined,
      "bad_signature",
    ],
    [
      "alg none",
      async (t: string) => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${t.split(".")[1]}.`,
      undefined,
      "unsupported_alg",
    ],
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

  test("an expired token with a wrong signature is bad_signature, not expired; within the leeway it is accepted", async () => {
    const s = new JwtSigner(SECRET);
    const forged = await new JwtSigner("x".repeat(40)).sign(claims({ iat: now - 7200, exp: now - 60 }));
    const r = await s.verify(forged);
    expect(r.ok ? "accepted" : r.reason).toBe("bad_signature");
    const late = await s.verify(await s.sign(claims({ exp: now - 10 })));
    expect(late.ok && late.value.jti).toBe("j-1");
  });

  test.each([
    [
      "HS384 with the same secret",
      async () =>
        new SignJWT({ ...claims() }).setProtectedHeader({ alg: "HS384" }).sign(new TextEncoder().encode(SECRET)),
      "unsupported_alg",
    ],
    [
      "a claim missing (admin)",
      async () =>
        new SignJWT({ ...claims(), admin: undefined })
          .setProtectedHeader({ alg: "HS256" })
          .sign(new TextEncoder().encode(SECRET)),
      "bad_claims",
    ],
    [
      "iat in the future",
      async () =>
        new SignJWT({ ...claims({ iat: now + 600, exp: now + 4000 }) })
          .setProtectedHeader({ alg: "HS256" })
          .sign(new TextEncoder().encode(SECRET)),
      "bad_claims",
    ],
  ])("a correctly signed token with %s is refused", async (_n, make, reason) => {
    const r = await new JwtSigner(SECRET).verify(await make());
    expect(r.ok ? "accepted" : r.reason).toBe(reason);
  });

  test("the token carries the header and claims of docs/API.md's JWT rules, iat being the signing time", async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await new JwtSigner(SECRET).sign(claims({ iat: 1 }));
    const [h, p] = token
      .split(".")
      .slice(0, 2)
      .map((x) => JSON.parse(Buffer.from(x, "base64url").toString()) as Record<string, unknown>);
    expect(h).toEqual({ alg: "HS256", typ: "JWT" });
    expect(Object.keys(p!).sort()).toEqual(["admin", "exp", "iat", "jti", "provider", "sub", "username"]);
    expect(p!.exp).toBe(now + 3600);
    expect(Number(p!.iat)).toBeGreaterThanOrEqual(before);
  });

  test("an empty secret is refused", () => {
    expect(() => new JwtSigner("")).toThrow();
  });
});
