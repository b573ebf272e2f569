/**
 * IP aliases with an optional port and capture id through the API (docs/ADMIN.md, "IP aliases"):
 * validation answers 400 naming the field, PUT keeps or clears the members, and /aliases/resolve
 * ranks rows as the shared case table says (test/fixtures/alias-cases.ts).
 */
import { describe, expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { ALIAS_CASES, ALIAS_ROWS } from "../fixtures/alias-cases.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore } from "./auth-harness.ts";

describe("IP aliases with port and capture id", () => {
  test("port 1-65535 and capture id 1-4294967295 (integers or null); anything else is a 400 naming the field", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ port: 0 }, "port"],
      [{ port: 65536 }, "port"],
      [{ port: 5060.5 }, "port"],
      [{ port: "sip" }, "port"],
      [{ port: -1 }, "port"],
      [{ capture_id: 0 }, "capture_id"],
      [{ capture_id: 4294967296 }, "capture_id"],
      [{ capture_id: 12.5 }, "capture_id"],
      [{ capture_id: "CAP101" }, "capture_id"],
    ];
    for (const [extra, field] of bad) {
      const r = await c.call("POST", "/aliases", { token, body: { ip: "10.0.0.1", name: "x", ...extra } });
      expect({ extra, status: r.status }).toEqual({ extra, status: 400 });
      const body = r.json as { error: string; message: string };
      expect(body.error).toBe("VALIDATION");
      expect(body.message).toBe(
        field === "port"
          ? "port: must be an integer from 1 to 65535, or null for every port"
          : "capture_id: must be an integer from 1 to 4294967295 (the HEP capture id; 0 means none), or null for every capture point",
      );
    }
    expect(itemsOf(await c.call("GET", "/aliases", { token }))).toEqual([]);

    const ok = await c.call("POST", "/aliases", {
      token,
      body: { ip: "10.0.0.1", name: "sbc-sip", port: 65535, capture_id: 4294967295 },
    });
    expect(ok.status).toBe(201);
    const id = (dataOf(ok) as { id: string }).id;
    expect(dataOf(await c.call("GET", `/aliases/${id}`, { token }))).toMatchObject({
      ip: "10.0.0.1",
      name: "sbc-sip",
      port: 65535,
      capture_id: 4294967295,
    });
    // PUT: a member left out keeps its value, null clears it, a bad one changes nothing.
    expect((await c.call("PUT", `/aliases/${id}`, { token, body: { name: "sbc" } })).status).toBe(200);
    expect(dataOf(await c.call("GET", `/aliases/${id}`, { token }))).toMatchObject({
      name: "sbc",
      port: 65535,
      capture_id: 4294967295,
    });
    expect((await c.call("PUT", `/aliases/${id}`, { token, body: { port: 70000 } })).status).toBe(400);
    expect((await c.call("PUT", `/aliases/${id}`, { token, body: { port: null, capture_id: 7 } })).status).toBe(200);
    expect(dataOf(await c.call("GET", `/aliases/${id}`, { token }))).toMatchObject({ port: null, capture_id: 7 });
    // Without port and capture id the row is the plain address alias it always was.
    const plain = await c.call("POST", "/aliases", { token, body: { ip: "10.0.0.2", name: "plain" } });
    expect(dataOf(await c.call("GET", `/aliases/${(dataOf(plain) as { id: string }).id}`, { token }))).toMatchObject({
      port: null,
      capture_id: null,
    });
    // resolve validates its query the same way
    expect((await c.call("GET", "/aliases/resolve?ip=10.0.0.1&port=0", { token })).status).toBe(400);
    expect((await c.call("GET", "/aliases/resolve?ip=10.0.0.1&capture_id=x", { token })).status).toBe(400);
  });

  test("resolve: most specific first (address, then port, then capture id), as the browser's aliasFor", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    for (const r of ALIAS_ROWS) {
      if (r.ip === "not-an-ip") continue; // the API refuses it; the resolver ignores it
      const body = {
        ip: r.ip,
        name: r.name,
        active: r.active,
        ...(r.port === null ? {} : { port: r.port }),
        ...(r.capture_id === null ? {} : { capture_id: r.capture_id }),
      };
      expect((await c.call("POST", "/aliases", { token, body })).status).toBe(201);
    }
    for (const [ip, port, captureId, name] of ALIAS_CASES) {
      if (ip === "garbage" || ip.startsWith("::ffff:")) continue; // not in the query's address pattern
      const q = new URLSearchParams({
        ip,
        ...(port === null ? {} : { port: String(port) }),
        ...(captureId === null ? {} : { capture_id: String(captureId) }),
      });
      const r = await c.call("GET", `/aliases/resolve?${q}`, { token });
      expect({ q: q.toString(), name: (dataOf(r) as { name: string | null }).name }).toEqual({
        q: q.toString(),
        name: name ?? null,
      });
    }
  });
});

describe("a wrong alias address is named in one line", () => {
  test.each([
    ["127.0.0.1/33", "ip: 127.0.0.1/33: prefix length must be 0-32"],
    ["2001:db8::/129", "ip: 2001:db8::/129: prefix length must be 0-128"],
    ["10.0.0.0/x", "ip: 10.0.0.0/x: prefix length must be 0-32"],
    ["10.0.0.300", "ip: 10.0.0.300: not an IPv4 or IPv6 address (e.g. 10.0.0.1, 2001:db8::1, or a network 10.0.0.0/8)"],
    ["pbx/24", "ip: pbx/24: pbx before the / is not an IPv4 or IPv6 address"],
  ])("POST and PUT /aliases with ip %j: 400 %j, no regular expression", async (ip, message) => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const post = await c.call("POST", "/aliases", { token, body: { ip, name: "edge" } });
    expect({ status: post.status, json: post.json }).toEqual({
      status: 400,
      json: expect.objectContaining({ error: "VALIDATION", message, fields: ["ip"] }),
    });
    const created = await c.call("POST", "/aliases", { token, body: { ip: "10.0.0.1", name: "edge" } });
    const put = await c.call("PUT", `/aliases/${String(dataOf(created).id)}`, { token, body: { ip } });
    expect((put.json as { message: string }).message).toBe(message);
  });
});
