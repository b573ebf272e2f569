import { describe, expect, test } from "bun:test";
import { digestAuthorization, parseDigestChallenge } from "./digest.ts";

describe("digest", () => {
  test("RFC 2617 §3.5 example: MD5, qop=auth", () => {
    const ch = parseDigestChallenge(
      'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    );
    expect(ch).toEqual({
      realm: "testrealm@host.com",
      nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
      opaque: "5ccc069c403ebaf9f0171e9517f40e41",
      algorithm: "MD5",
      qop: "auth",
    });
    const value = digestAuthorization(ch!, {
      method: "GET",
      uri: "/dir/index.html",
      username: "Mufasa",
      password: "Circle Of Life",
      nc: 1,
      cnonce: "0a4f113b",
    });
    expect(value).toContain('response="6629fae49393a05397450978507c4ef1"');
    expect(value).toContain("nc=00000001");
    expect(value).toContain('opaque="5ccc069c403ebaf9f0171e9517f40e41"');
  });

  test("RFC 7616 §3.9.1 example: SHA-256, qop=auth", () => {
    const ch = parseDigestChallenge(
      'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"',
    );
    const value = digestAuthorization(ch!, {
      method: "GET",
      uri: "/dir/index.html",
      username: "Mufasa",
      password: "Circle of Life",
      nc: 1,
      cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
    });
    expect(value).toContain('response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"');
  });

  test("no qop: the RFC 2069 response form", () => {
    const ch = parseDigestChallenge('Digest realm="r", nonce="n"')!;
    expect(ch.qop).toBeUndefined();
    const value = digestAuthorization(ch, { method: "REGISTER", uri: "sip:x", username: "u", password: "p" });
    const ha1 = new Bun.CryptoHasher("md5").update("u:r:p").digest("hex");
    const ha2 = new Bun.CryptoHasher("md5").update("REGISTER:sip:x").digest("hex");
    expect(value).toContain(`response="${new Bun.CryptoHasher("md5").update(`${ha1}:n:${ha2}`).digest("hex")}"`);
    expect(value).not.toContain("qop=");
  });

  test("a Basic challenge is not a digest challenge", () => {
    expect(parseDigestChallenge('Basic realm="x"')).toBeNull();
  });
});
