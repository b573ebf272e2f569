/**
 * The whole multi-site layout on one machine (scripts/layout.ts; docs/DEPLOY.md "The whole layout
 * on one machine"): two edges capture HEP over UDP, each answers its own searches, and the central's
 * dashboard finds every call of both sites once the edges have forwarded them. Every role is a real
 * `svc serve` process (the built executable when SVC_TEST_BINARY is set).
 */
import { expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startLayout, type Role } from "../../scripts/layout.ts";
import { invite } from "../fixtures/sip.ts";
import { waitFor } from "../harness.ts";

const RUN = crypto.randomUUID().slice(0, 8);

async function login(r: Role, password: string): Promise<string> {
  const res = await fetch(`${r.url("coordinator-http")}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

/** Call-IDs of `prefix` the role's search finds in the last hour (newest 1000). */
async function callIds(r: Role, token: string, prefix: string): Promise<string[]> {
  const res = await fetch(`${r.url("coordinator-http")}/api/v4/transactions/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      filter: { proto_type: 1, event_type: "call", session_id: `${prefix}%` },
      param: { limit: 1000 },
      timestamp: { from: Date.now() - 3_600_000, to: Date.now() + 60_000 },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { items: Array<{ session_id: string }> } }).data.items
    .map((i) => i.session_id)
    .sort();
}

test("two edges forward to the central: each edge finds its own calls, the central finds every call of both, once", async () => {
  const binary = process.env.SVC_TEST_BINARY;
  await using layout = await startLayout({ edges: 2, ...(binary ? { binary } : {}) });
  const udp = await Bun.udpSocket({});
  const sent: Record<string, string[]> = {};
  try {
    for (const [n, edge] of layout.edges.entries()) {
      const prefix = `lay-${RUN}-e${n + 1}-`;
      sent[edge.name] = [];
      for (let i = 0; i < 20; i++) {
        const callId = `${prefix}${String(i).padStart(2, "0")}`;
        sent[edge.name]!.push(callId);
        const payload = invite({ callId, from: `10${n}${i}`, to: "2000" });
        udp.send(
          encodeHep3({
            srcIp: `10.${n}.0.1`,
            dstIp: "10.9.0.1",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: Date.now() * 1000,
            protoType: 1,
            captureId: 100 + n,
            payload,
          }),
          edge.port("hep-udp"),
          "127.0.0.1",
        );
      }
    }
  } finally {
    udp.close();
  }
  const sentAt = Date.now();
  for (const edge of layout.edges) {
    const token = await login(edge, layout.adminPassword);
    const prefix = sent[edge.name]![0]!.slice(0, -2);
    await waitFor(
      `${edge.name} finding its calls`,
      async () => (await callIds(edge, token, prefix)).length === 20 || undefined,
      30_000,
    );
    expect(await callIds(edge, token, prefix)).toEqual(sent[edge.name]!);
  }
  const central = await login(layout.central, layout.adminPassword);
  const all = Object.values(sent).flat().sort();
  await waitFor(
    "the central finding both sites' calls",
    async () => (await callIds(layout.central, central, `lay-${RUN}-`)).length >= all.length || undefined,
    30_000,
  );
  // Each call exactly once (one INVITE each was sent): no batch was applied twice.
  expect(await callIds(layout.central, central, `lay-${RUN}-`)).toEqual(all);
  console.info(
    `layout: the central found all ${all.length} calls ${Date.now() - sentAt} ms after they were sent to the edges`,
  );
}, 120_000);
