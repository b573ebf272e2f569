/**
 * Transaction exports over the real appliance: a two-leg call (the B leg over IPv6, linked by a
 * B2BUA Call-ID suffix) ingested as HEP over UDP, then
 *  - POST /transactions/export/pcap → tshark opens it: no malformed frames, the same SIP messages
 *    at the same microsecond times as ingested; `whitelist` and the user's export.transaction
 *    exclusions (CIDR and alias) are honoured, and `use_default_exclusions: false` turns the latter off;
 *  - POST /transactions/export/text → one block per message with times, endpoints, aliases, SIP text;
 *  - share links: public download without login, only the token's hash stored, 404 when unknown or expired;
 *  - /exports jobs: queued → done, download equals the direct export, another user's job is 404,
 *    a failing job reports why and its download is 409.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { extractSipMessages } from "../../src/pcap/index.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { eventOf, startWithApi, tsharkSip, type Api, type TsharkSip } from "./export-helpers.ts";

const NOW_MS = Date.now();
const BASE_US = (NOW_MS - 120_000) * 1000 + 123;

interface Sent {
  callId: string;
  event: string;
  src: string;
  dst: string;
  srcPort: number;
  timestampUs: number;
  payload: string;
}

/** The A leg 10.0.0.1 ↔ 10.0.0.2 and the B leg 2001:db8::2 ↔ 2001:db8::3 (Call-ID A + "_b2b-1"). */
function twoLegCall(A: string): Sent[] {
  const B = `${A}_b2b-1`;
  const P = { from: "1001", to: "2002" };
  const v4 = { a: "10.0.0.1", b: "10.0.0.2" };
  const v6 = { a: "2001:db8::2", b: "2001:db8::3" };
  const msgs: Array<[string, string, string, string, number, string]> = [
    [A, "INVITE", v4.a, v4.b, 5062, invite({ callId: A, ...P, fromTag: "fa" })],
    [A, "100", v4.b, v4.a, 5060, response(100, "Trying", "INVITE", { callId: A, ...P, fromTag: "fa" })],
    [B, "INVITE", v6.a, v6.b, 5060, invite({ callId: B, ...P, fromTag: "fb", srcIp: v6.a })],
    [B, "180", v6.b, v6.a, 5070, response(180, "Ringing", "INVITE", { callId: B, ...P, fromTag: "fb", toTag: "tb" })],
    [B, "200", v6.b, v6.a, 5070, response(200, "OK", "INVITE", { callId: B, ...P, fromTag: "fb", toTag: "tb" })],
    [A, "200", v4.b, v4.a, 5060, response(200, "OK", "INVITE", { callId: A, ...P, fromTag: "fa", toTag: "ta" })],
    [A, "ACK", v4.a, v4.b, 5062, request("ACK", { callId: A, ...P, fromTag: "fa", toTag: "ta", cseq: 1 })],
    [B, "ACK", v6.a, v6.b, 5060, request("ACK", { callId: B, ...P, fromTag: "fb", toTag: "tb", cseq: 1 })],
    [A, "BYE", v4.a, v4.b, 5062, request("BYE", { callId: A, ...P, fromTag: "fa", toTag: "ta", cseq: 2 })],
  ];
  // Odd microsecond steps: a millisecond-rounding bug anywhere shows up as a time mismatch.
  return msgs.map(([callId, event, src, dst, srcPort, payload], i) => ({
    callId,
    event,
    src,
    dst,
    srcPort,
    timestampUs: BASE_US + i * 10_007,
    payload,
  }));
}

async function ingest(a: Awaited<ReturnType<typeof startWithApi>>["a"], sent: Sent[]): Promise<void> {
  const { ingest: hep, lake } = a.app;
  const udp = await Bun.udpSocket({});
  for (const m of sent) {
    udp.send(
      encodeHep3({
        srcIp: m.src,
        dstIp: m.dst,
        srcPort: m.srcPort,
        dstPort: 5060,
        timestampUs: m.timestampUs,
        protoType: 1,
        captureId: 3,
        nodeName: "edge",
        payload: m.payload,
      }),
      hep!.listeners.udp!.port(),
      "127.0.0.1",
    );
  }
  udp.close();
  await waitFor("the call is stored", async () => {
    await lake!.sync();
    const ids = [...new Set(sent.map((m) => m.callId))];
    const r = await lake!.query(
      `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id IN (${ids.map((_x, i) => `$${i + 1}`).join(", ")})`,
      ids,
    );
    return Number(r.rows[0]!.n) === sent.length;
  });
}

const range = { from: NOW_MS - 3_600_000, to: NOW_MS + 60_000 };
const key = (m: { callId: string; event: string; timestampUs: number; src: string; srcPort: number }) =>
  `${m.timestampUs} ${m.callId} ${m.event} ${m.src}:${m.srcPort}`;
const wireKey = (f: TsharkSip) => key({ ...f, timestampUs: f.timeUs, event: eventOf(f) });

/** Exports, writes the file and returns tshark's view of it (one row per frame). */
async function exportWithTshark(api: Api, dir: string, body: Record<string, unknown>, name: string) {
  const r = await api.call("POST", "/transactions/export/pcap", body);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");
  expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="call-[A-Za-z0-9._-]+\.pcap"$/);
  const path = join(dir, `${name}.pcap`);
  await Bun.write(path, r.bytes);
  return { bytes: r.bytes, frames: tsharkSip(path) };
}

describe("transaction exports", () => {
  peerTest(
    "PCAP export of a two-leg call: tshark sees the same SIP messages at the same µs times, nothing malformed; exclusions honoured",
    [PEERS.tshark],
    async () => {
      await using dir = tempDir();
      await using s = await startWithApi(dir.path);
      const { api } = s;
      const A = `exp-${crypto.randomUUID()}@pbx`;
      const sent = twoLegCall(A);
      await ingest(s.a, sent);

      const all = await exportWithTshark(api, dir.path, { session_id: A, timestamp: range }, "all");
      expect(all.frames.filter((f) => f.expert !== "")).toEqual([]);
      expect(all.frames.map((f) => wireKey(f))).toEqual(sent.map(key));

      // whitelist = addresses to EXCLUDE (docs/API.md "Exports and share links"), exact address or CIDR.
      const noV6 = await exportWithTshark(
        api,
        dir.path,
        { session_id: A, timestamp: range, whitelist: ["2001:db8::3"] },
        "no-b",
      );
      expect(noV6.frames.map((f) => wireKey(f))).toEqual(
        sent.filter((m) => m.src !== "2001:db8::3" && m.dst !== "2001:db8::3").map(key),
      );
      const noA = await exportWithTshark(
        api,
        dir.path,
        { session_id: [A], timestamp: range, whitelist: ["10.0.0.0/30"] },
        "no-a",
      );
      expect(new Set(noA.frames.map((f) => f.callId))).toEqual(new Set([`${A}_b2b-1`]));

      // The user's default exclusions: an alias (every active alias row of that name) and a disabled entry.
      expect((await api.call("POST", "/aliases", { ip: "2001:db8::3", name: "far-sbc" })).status).toBe(201);
      const put = await api.call("PUT", "/me/settings/export", {
        param: "transaction",
        data: {
          excludedCIDR: [
            { alias: "far-sbc", disabled: false },
            { ip: "10.0.0.1", disabled: true },
          ],
        },
      });
      expect(put.status).toBe(200);
      const byDefault = await exportWithTshark(api, dir.path, { session_id: A, timestamp: range }, "defaults");
      expect(byDefault.frames.map((f) => wireKey(f))).toEqual(noV6.frames.map((f) => wireKey(f)));
      const optedOut = await exportWithTshark(
        api,
        dir.path,
        { session_id: A, timestamp: range, use_default_exclusions: false },
        "opted-out",
      );
      expect(optedOut.bytes).toEqual(all.bytes);

      // TEXT: header line per message (time, transport, endpoints with ports and aliases), then the SIP text.
      const text = await api.call("POST", "/transactions/export/text", {
        session_id: A,
        timestamp: range,
        use_default_exclusions: false,
      });
      expect(text.status).toBe(200);
      expect(text.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(text.headers.get("content-disposition")).toMatch(/filename="call-.+\.txt"$/);
      const headers = text.text.split("\n").filter((l) => /^\[\d+\] /.test(l));
      expect(headers.length).toBe(sent.length);
      expect(headers[2]).toMatch(
        /^\[3\] \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z UDP \[2001:db8::2\]:5060 -> \[2001:db8::3\]:5060 \(far-sbc\)$/,
      );
      expect(headers[0]).toContain(" 10.0.0.1:5062 -> 10.0.0.2:5060");
      for (const m of sent) expect(text.text).toContain(m.payload.split("\r\n")[0]!);
      expect(text.text).toContain(`Call-ID: ${A}_b2b-1\n`);

      // Client mistakes are 4xx.
      expect(
        (await api.call("POST", "/transactions/export/pcap", { session_id: "no-such-call", timestamp: range })).status,
      ).toBe(404);
      expect((await api.call("POST", "/transactions/export/pcap", { timestamp: range })).status).toBe(400);
      expect(
        (await api.call("POST", "/transactions/export/pcap", { session_id: A, timestamp: { from: "soon" } })).status,
      ).toBe(400);
      expect((await api.call("POST", "/transactions/export/pcap", { session_id: A }, { token: null })).status).toBe(
        401,
      );
    },
    60_000,
  );

  test("share links: public download honours the stored request, only the token's hash is stored, unknown or expired is 404", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const { api } = s;
    const A = `share-${crypto.randomUUID()}`;
    const sent = twoLegCall(A);
    await ingest(s.a, sent);

    const made = await api.call("POST", "/transactions/export/link", {
      session_id: A,
      timestamp: range,
      whitelist: ["10.0.0.2"],
      expires_in_sec: 3600,
    });
    expect(made.status).toBe(201);
    const link = made.json!.data as { token: string; pcap_url: string; text_url: string; expires_at: string };
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.pcap_url).toBe(`${api.base}/share/${link.token}/pcap`);
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(3_500_000);

    // No credentials at all.
    const pub = await fetch(link.pcap_url);
    expect(pub.status).toBe(200);
    expect(pub.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");
    const got = extractSipMessages(new Uint8Array(await pub.arrayBuffer())).messages;
    const kept = sent.filter((m) => m.src !== "10.0.0.2" && m.dst !== "10.0.0.2");
    expect(got.map((m) => `${m.timestampUs} ${m.srcIp}`)).toEqual(kept.map((m) => `${m.timestampUs} ${m.src}`));
    const txt = await fetch(link.text_url);
    expect(txt.status).toBe(200);
    expect((await txt.text()).split("\n").filter((l) => /^\[\d+\] /.test(l)).length).toBe(kept.length);

    // Only SHA-256(token) is in the settings database.
    const db = new Database(join(dir.path, "settings.db"), { readonly: true });
    const ids = (db.query("SELECT id FROM share_links").all() as Array<{ id: string }>).map((r) => r.id);
    db.close();
    expect(ids).toEqual([sha256Hex(link.token)]);

    const unknown = await fetch(`${api.base}/share/${"A".repeat(43)}/pcap`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toBe("NOT_FOUND");
    expect((await fetch(`${api.base}/share/${link.token}/zip`)).status).toBe(401); // not an open route
    expect((await fetch(`${api.base}/share/not-a-token/pcap`)).status).toBe(404);

    const short = await api.call("POST", "/transactions/export/link", {
      session_id: A,
      timestamp: range,
      expires_in_sec: 1,
    });
    expect(short.status).toBe(201);
    const shortUrl = (short.json!.data as { pcap_url: string }).pcap_url;
    await waitFor("the short link expires", async () => (await fetch(shortUrl)).status === 404, 10_000, 100);

    expect(
      (
        await api.call("POST", "/transactions/export/link", {
          session_id: A,
          timestamp: range,
          expires_in_sec: 31 * 86_400,
        })
      ).status,
    ).toBe(400);
    expect(
      (await api.call("POST", "/transactions/export/link", { session_id: "nothing-here", timestamp: range })).status,
    ).toBe(404);
  }, 60_000);

  test("export jobs: queued → done, download equals the direct export, per user, failures reported", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const { api } = s;
    const A = `job-${crypto.randomUUID()}`;
    await ingest(s.a, twoLegCall(A));

    const body = { session_id: A, timestamp: range, whitelist: ["10.0.0.1"] };
    const made = await api.call("POST", "/exports", { ...body, format: "PCAP" });
    expect(made.status).toBe(201);
    const job = made.json!.data as { id: string; status: string; format: string; created_at: string };
    expect(job).toMatchObject({ status: "queued", format: "pcap" });
    expect(Date.parse(job.created_at)).toBeGreaterThan(NOW_MS - 1000);
    const done = await waitFor("the job is done", async () => {
      const r = await api.call("GET", `/exports/${job.id}`);
      const st = r.json!.data as { status: string; download_url: string | null; bytes: number };
      return st.status === "done" ? st : undefined;
    });
    expect(done.download_url).toBe(`/api/v4/exports/${job.id}/download`);
    const file = await api.call("GET", `/exports/${job.id}/download`);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/octet-stream");
    expect(file.headers.get("content-disposition")).toMatch(/^attachment; filename="call-.+\.pcap"$/);
    expect(done.bytes).toBe(file.bytes.length);
    const direct = await api.call("POST", "/transactions/export/pcap", body);
    expect(file.bytes).toEqual(direct.bytes);

    const textJob = await api.call("POST", "/exports", { ...body, format: "text" });
    expect(textJob.status).toBe(201);
    const textId = (textJob.json!.data as { id: string }).id;
    await waitFor(
      "the text job is done",
      async () => (await api.call("GET", `/exports/${textId}`)).json!.data!.status === "done",
    );
    const textFile = await api.call("GET", `/exports/${textId}/download`);
    expect(textFile.text).toBe((await api.call("POST", "/transactions/export/text", body)).text);

    // Another user sees nothing of it.
    expect((await api.call("POST", "/users", { username: "bob", password: "bob-password-1" })).status).toBe(201);
    const bob = await api.login("bob", "bob-password-1");
    expect((await api.call("GET", `/exports/${job.id}`, undefined, { token: bob })).status).toBe(404);
    expect((await api.call("GET", `/exports/${job.id}/download`, undefined, { token: bob })).status).toBe(404);
    expect((await api.call("GET", `/exports/${job.id}/download`, undefined, { token: null })).status).toBe(401);
    expect((await api.call("GET", "/exports/0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")).status).toBe(404);

    // A job that cannot find its call fails with the reason; its download is 409 (not done).
    const bad = await api.call("POST", "/exports", {
      session_id: "nothing-like-this",
      timestamp: range,
      format: "text",
    });
    expect(bad.status).toBe(201);
    const badId = (bad.json!.data as { id: string }).id;
    const failed = await waitFor("the job fails", async () => {
      const st = (await api.call("GET", `/exports/${badId}`)).json!.data as { status: string; error: string | null };
      return st.status === "failed" ? st : undefined;
    });
    expect(failed.error).toContain("no messages for nothing-like-this");
    const conflict = await api.call("GET", `/exports/${badId}/download`);
    expect(conflict.status).toBe(409);
    expect(conflict.json).toMatchObject({ error: "CONFLICT", status: "failed" });

    expect((await api.call("POST", "/exports", { ...body, format: "zip" })).status).toBe(400);
    expect((await api.call("POST", "/exports", body)).status).toBe(400);
  }, 60_000);

  test("garbage bodies, ids and tokens on every export and import route answer below 500", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const routes = [
      "/transactions/export/pcap",
      "/transactions/export/text",
      "/transactions/export/link",
      "/exports",
      "/imports/pcap",
    ];
    const bodies = [
      undefined,
      "",
      "null",
      "[]",
      '"text"',
      "{}",
      '{"session_id":{"$gt":1},"format":1,"timestamp":"x","whitelist":"10.0.0.1"}',
      '{"session_id":"x","timestamp":{"from":"1e999"}}',
      "{bad json",
    ];
    const failures: string[] = [];
    for (const path of routes) {
      for (const b of bodies) {
        const r = await fetch(`${s.api.base}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${s.api.token}`,
            ...(b === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(b === undefined ? {} : { body: b }),
        });
        if (r.status >= 500) failures.push(`POST ${path} ${b} → ${r.status} ${await r.text()}`);
      }
    }
    for (const id of ["x", "%00", "00000000-0000-0000-0000-000000000000", "..%2F..%2Fetc"]) {
      for (const path of [`/exports/${id}`, `/exports/${id}/download`, `/share/${id}/pcap`, `/share/${id}/text`]) {
        const r = await fetch(`${s.api.base}${path}`, { headers: { authorization: `Bearer ${s.api.token}` } });
        if (r.status >= 500) failures.push(`GET ${path} → ${r.status} ${await r.text()}`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
