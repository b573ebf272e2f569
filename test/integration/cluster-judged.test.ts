/**
 * The grown layout, every role a real `svc serve` process (scripts/layout.ts; docs/DEPLOY.md
 * "Layouts"): one PostgreSQL (test/peers/postgres.ts), two capture nodes sharing one lake on its
 * DuckLake catalog, one SQLite edge forwarding to the first node, and two coordinators over the
 * nodes sharing one settings database, one JWT secret and the PostgreSQL shared store.
 *
 * HEP goes to every node and to the edge, one call's messages spread over all three. Through each
 * coordinator: the search finds every call exactly once (the nodes share a lake: the coordinator
 * reads its files and asks each node for its buffer only, docs/ARCHITECTURE.md "Coordinator over
 * several nodes"), the call view of the spread call has every message in order, a user and a
 * session made on one coordinator work on the other (and a logout on one holds on the other), and
 * with one node killed the answer is partial and names it.
 *
 * The other tests pin what the judged one revealed: a coordinator reading the lake without capturing
 * finds what the nodes flushed; a search racing the nodes' flushes never loses a call it found
 * before; a coordinator without a lake still reads the lake's files when the node reading them dies.
 */
import { expect } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startLayout, type Layout, type Role } from "../../scripts/layout.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { peerTest, waitFor } from "../harness.ts";
import { postgresPeer } from "../peers/postgres.ts";

const RUN = crypto.randomUUID().slice(0, 8);
const PREFIX = `judged-${RUN}-`;
const CALLS_PER_TARGET = 10;
/** Five processes with DuckDB on a small machine: one engine thread each. */
const SMALL = {
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "384MB" } } },
};

interface NodeReport {
  name: string;
  status: string;
  rows: number;
  ms: number;
  scope?: string;
  error?: string;
}
interface SearchAnswer {
  ids: string[];
  nodes: NodeReport[];
  partial: boolean;
}

const api = (r: Role) => `${r.url("coordinator-http")}/api/v4`;

async function call(
  r: Role,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<Response> {
  return await fetch(`${api(r)}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function login(r: Role, username: string, password: string): Promise<{ token: string; jti: string }> {
  const res = await call(r, "POST", "/auth/sessions", undefined, { username, password });
  expect(res.status).toBe(201);
  return (await res.json()) as { token: string; jti: string };
}

async function search(r: Role, token: string, prefix = PREFIX): Promise<SearchAnswer> {
  const res = await call(r, "POST", "/transactions/search", token, {
    filter: { proto_type: 1, event_type: "call", session_id: `${prefix}%` },
    param: { limit: 1000 },
    timestamp: { from: Date.now() - 3_600_000, to: Date.now() + 60_000 },
  });
  expect(res.status).toBe(200);
  const j = (await res.json()) as {
    data: { items: Array<{ session_id: string }> };
    meta: { nodes: NodeReport[]; partial: boolean };
  };
  return { ids: j.data.items.map((i) => i.session_id).sort(), nodes: j.meta.nodes, partial: j.meta.partial };
}

/** Rows of `prefix` a node's own search finds (its node port): all of its lake, or its buffer only. */
async function nodeSearch(node: Role, token: string, prefix: string, bufferOnly: boolean): Promise<number> {
  const res = await fetch(`${node.url("node-http")}/api/v1/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      filter: { proto_type: 1, event_type: "call", session_id: `${prefix}%` },
      timestamp: { from: Date.now() - 3_600_000, to: Date.now() + 60_000 },
      param: { limit: 1000 },
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { items: unknown[] } }).data.items.length;
}

/** The spread call's messages in the order sent, each with the role it went to. */
function spreadCall(layout: Layout) {
  const p = { callId: `${PREFIX}spread`, from: "1000", to: "2000" };
  const [n1, n2] = layout.nodes;
  const edge = layout.edges[0]!;
  return [
    { to: n1!, sip: invite(p) },
    { to: n2!, sip: response(100, "Trying", "INVITE", p) },
    { to: edge, sip: response(200, "OK", "INVITE", p) },
    { to: n2!, sip: request("ACK", { ...p, toTag: "ttag-1", cseq: 1 }) },
    { to: n1!, sip: request("BYE", { ...p, toTag: "ttag-1" }) },
    { to: edge, sip: response(200, "OK", "BYE", p) },
  ];
}

peerTest(
  "2 nodes on a shared PostgreSQL lake, an edge forwarding, 2 coordinators: each finds every call once, the whole ladder, one login state, a killed node named",
  [postgresPeer],
  async () => {
    const binary = process.env.SVC_TEST_BINARY;
    await using layout = await startLayout({
      nodes: 2,
      edges: 1,
      coordinators: 2,
      roleConfig: SMALL,
      ...(binary ? { binary } : {}),
    });
    const targets = [...layout.nodes, ...layout.edges];
    const expected: string[] = [];
    const udp = await Bun.udpSocket({});
    const t0Us = Date.now() * 1000;
    try {
      for (const [n, target] of targets.entries()) {
        for (let i = 0; i < CALLS_PER_TARGET; i++) {
          const callId = `${PREFIX}${target.name}-${String(i).padStart(2, "0")}`;
          expected.push(callId);
          const hep = encodeHep3({
            srcIp: `10.${n}.0.1`,
            dstIp: "10.9.0.1",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: t0Us + n * 1000 + i,
            protoType: 1,
            captureId: 100 + n,
            payload: invite({ callId, from: `10${n}${i}`, to: "2000" }),
          });
          udp.send(hep, target.port("hep-udp"), "127.0.0.1");
        }
      }
      // One call seen in part by every capture point: the call view must join them. 1 ms apart, in order.
      for (const [i, m] of spreadCall(layout).entries()) {
        const hep = encodeHep3({
          srcIp: "10.7.0.1",
          dstIp: "10.7.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: t0Us + 100_000 + i * 1000,
          protoType: 1,
          captureId: 7,
          payload: m.sip,
        });
        udp.send(hep, m.to.port("hep-udp"), "127.0.0.1");
      }
      // The search lists messages: the spread call is its six rows.
      for (const _ of spreadCall(layout)) expected.push(`${PREFIX}spread`);
    } finally {
      udp.close();
    }
    expected.sort();
    const [c1, c2] = layout.coordinators as [Role, Role];
    const admin = (await login(c1, "admin", layout.adminPassword)).token;

    // Search: every call once through each coordinator, the shared lake read once (files) plus each node's buffer.
    await waitFor(
      "coordinator-1 finding every call",
      async () => (await search(c1, admin)).ids.length >= expected.length || undefined,
      45_000,
      200,
    );
    for (const c of [c1, c2]) {
      const r = await search(c, admin);
      expect(r.ids).toEqual(expected);
      expect(r.partial).toBe(false);
      expect(r.nodes.find((n) => n.name === "local")?.status).toBe("ok");
      for (const node of layout.nodes)
        expect(r.nodes.find((n) => n.name === node.name)).toMatchObject({ scope: "buffer" });
    }

    // The call view of the spread call through each coordinator: all six messages, in the order sent.
    const firstLine = (sip: string) => `${sip.split("\r\n")[0]} (${/^CSeq: (.*)$/m.exec(sip)?.[1]})`;
    const sent = spreadCall(layout).map((m) => firstLine(m.sip));
    for (const c of [c1, c2]) {
      const view = async () => {
        const res = await call(c, "POST", "/transactions/messages", admin, {
          session_id: `${PREFIX}spread`,
          timestamp: { from: Math.floor(t0Us / 1000) - 60_000, to: Math.floor(t0Us / 1000) + 60_000 },
        });
        if (res.status === 404) return [];
        expect(res.status).toBe(200);
        const items = ((await res.json()) as { data: { items: Array<{ payload?: string }> } }).data.items;
        return items.map((i) => firstLine(String(i.payload ?? "")));
      };
      await waitFor(
        `${c.name}: the call view with every message`,
        async () => (await view()).length >= sent.length || undefined,
        30_000,
        200,
      );
      expect(await view()).toEqual(sent);
    }

    // A user made on coordinator 1 signs in on coordinator 2; its session works on both; a logout on one holds on the other.
    const user = { username: `judge-${RUN}`, password: `pw-${RUN}-long-enough` };
    expect((await call(c1, "POST", "/users", admin, { ...user, is_admin: false })).status).toBe(201);
    const s = await login(c2, user.username, user.password);
    expect((await call(c1, "GET", "/me", s.token)).status).toBe(200);
    expect((await call(c2, "GET", "/me", s.token)).status).toBe(200);
    expect((await call(c1, "DELETE", `/auth/sessions/${s.jti}`, s.token)).status).toBe(204);
    expect((await call(c2, "GET", "/me", s.token)).status).toBe(401);

    // One node killed: each coordinator answers with the others and names it.
    const dead = layout.nodes[1]!;
    // Its rows all in the shared files first: then the others' answer still holds every call.
    await waitFor(
      `${dead.name} flushing its buffer`,
      async () => (await nodeSearch(dead, layout.nodeToken, PREFIX, true)) === 0 || undefined,
      30_000,
      200,
    );
    dead.process.kill("SIGKILL");
    await dead.process.exited;
    for (const c of [c1, c2]) {
      const r = await search(c, admin);
      expect(r.partial).toBe(true);
      const named = r.nodes.find((n) => n.name === dead.name);
      expect(named?.status).toBe("failed");
      expect(named?.error).toBeTruthy();
      expect(r.nodes.filter((n) => n.status === "failed").map((n) => n.name)).toEqual([dead.name]);
      expect(r.ids).toEqual(expected);
    }
  },
  120_000,
);

peerTest(
  "2 nodes of one lake flushing while a coordinator searches: a call found once is found by every later search",
  [postgresPeer],
  async () => {
    const binary = process.env.SVC_TEST_BINARY;
    // Flushes 10 times a second: rows keep moving from the nodes' buffers into the shared files while the coordinator reads.
    const fast = { storage: { lakehouse: { flush_interval_sec: 0.2 } } };
    await using layout = await startLayout({
      nodes: 2,
      edges: 0,
      coordinators: 1,
      roleConfig: {
        ...SMALL,
        ...fast,
        storage: { lakehouse: { ...SMALL.storage.lakehouse, ...fast.storage.lakehouse } },
      },
      ...(binary ? { binary } : {}),
    });
    const prefix = `moving-${RUN}-`;
    const coord = layout.coordinators[0]!;
    const admin = (await login(coord, "admin", layout.adminPassword)).token;
    const udp = await Bun.udpSocket({});
    let sent = 0;
    const sendOne = () => {
      for (const [n, node] of layout.nodes.entries()) {
        const callId = `${prefix}${String(sent).padStart(5, "0")}-${node.name}`;
        const hep = encodeHep3({
          srcIp: `10.${n}.0.1`,
          dstIp: "10.9.0.1",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: Date.now() * 1000,
          protoType: 1,
          captureId: 100 + n,
          payload: invite({ callId, from: "1000", to: "2000" }),
        });
        udp.send(hep, node.port("hep-udp"), "127.0.0.1");
      }
      sent++;
    };
    // 150 calls per node over about 2 s, searched meanwhile and until every one is found.
    const TOTAL = 150;
    const sender = setInterval(() => (sent < TOTAL ? sendOne() : clearInterval(sender)), 15);
    try {
      let seen = new Set<string>();
      const lost: string[] = [];
      for (let round = 0; seen.size < TOTAL * 2; round++) {
        if (round >= 60) throw new Error(`after 60 searches ${seen.size} of ${TOTAL * 2} calls found`);
        const res = await call(coord, "POST", "/transactions/search", admin, {
          filter: { proto_type: 1, event_type: "call", session_id: `${prefix}%` },
          param: { limit: 1000 },
          timestamp: { from: Date.now() - 3_600_000, to: Date.now() + 60_000 },
        });
        expect(res.status).toBe(200);
        const j = (await res.json()) as {
          data: { items: Array<{ session_id: string }> };
          meta: { partial: boolean; nodes: NodeReport[] };
        };
        expect(j.meta.partial).toBe(false);
        const now = new Set(j.data.items.map((i) => i.session_id));
        expect(now.size).toBe(j.data.items.length);
        for (const id of seen) if (!now.has(id)) lost.push(`search ${round}: ${id}`);
        seen = now;
      }
      expect(lost).toEqual([]);
    } finally {
      clearInterval(sender);
      udp.close();
    }
  },
  120_000,
);

peerTest(
  "a coordinator reading the shared lake without capturing finds the calls the nodes flushed into it",
  [postgresPeer],
  async () => {
    const binary = process.env.SVC_TEST_BINARY;
    await using layout = await startLayout({
      nodes: 1,
      edges: 0,
      coordinators: 1,
      roleConfig: SMALL,
      ...(binary ? { binary } : {}),
    });
    const prefix = `flushed-${RUN}-`;
    const node = layout.nodes[0]!;
    const expected = Array.from({ length: CALLS_PER_TARGET }, (_, i) => `${prefix}${String(i).padStart(2, "0")}`);
    const udp = await Bun.udpSocket({});
    try {
      for (const callId of expected)
        udp.send(
          encodeHep3({
            srcIp: "10.0.0.1",
            dstIp: "10.9.0.1",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: Date.now() * 1000,
            protoType: 1,
            payload: invite({ callId, from: "1000", to: "2000" }),
          }),
          node.port("hep-udp"),
          "127.0.0.1",
        );
    } finally {
      udp.close();
    }
    // Stored in the shared files, none left in the node's buffer: the coordinator's own read of the lake is the answer.
    await waitFor(
      "the node storing every call",
      async () => (await nodeSearch(node, layout.nodeToken, prefix, false)) === expected.length || undefined,
      30_000,
      200,
    );
    await waitFor(
      "the node flushing its buffer",
      async () => (await nodeSearch(node, layout.nodeToken, prefix, true)) === 0 || undefined,
      30_000,
      200,
    );
    const coord = layout.coordinators[0]!;
    const r = await search(coord, (await login(coord, "admin", layout.adminPassword)).token, prefix);
    expect(r.ids).toEqual(expected);
    expect(r.nodes.find((n) => n.name === "local")).toMatchObject({ status: "ok", rows: expected.length });
  },
  60_000,
);

peerTest(
  "a coordinator without a lake over 2 nodes of one lake: the node reading the files killed, another node of the lake reads them",
  [postgresPeer],
  async () => {
    const binary = process.env.SVC_TEST_BINARY;
    await using layout = await startLayout({
      nodes: 2,
      edges: 0,
      coordinators: 1,
      coordinatorLake: false,
      roleConfig: SMALL,
      ...(binary ? { binary } : {}),
    });
    const prefix = `bare-${RUN}-`;
    const expected: string[] = [];
    const udp = await Bun.udpSocket({});
    try {
      for (const [n, node] of layout.nodes.entries()) {
        for (let i = 0; i < CALLS_PER_TARGET; i++) {
          const callId = `${prefix}${node.name}-${String(i).padStart(2, "0")}`;
          expected.push(callId);
          const hep = encodeHep3({
            srcIp: `10.${n}.0.1`,
            dstIp: "10.9.0.1",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: Date.now() * 1000,
            protoType: 1,
            captureId: 100 + n,
            payload: invite({ callId, from: `10${n}${i}`, to: "2000" }),
          });
          udp.send(hep, node.port("hep-udp"), "127.0.0.1");
        }
      }
    } finally {
      udp.close();
    }
    expected.sort();
    const coord = layout.coordinators[0]!;
    const admin = (await login(coord, "admin", layout.adminPassword)).token;
    const find = async () => {
      const res = await call(coord, "POST", "/transactions/search", admin, {
        filter: { proto_type: 1, event_type: "call", session_id: `${prefix}%` },
        param: { limit: 1000 },
        timestamp: { from: Date.now() - 3_600_000, to: Date.now() + 60_000 },
      });
      expect(res.status).toBe(200);
      const j = (await res.json()) as {
        data: { items: Array<{ session_id: string }> };
        meta: { nodes: NodeReport[]; partial: boolean };
      };
      return { ids: j.data.items.map((i) => i.session_id).sort(), nodes: j.meta.nodes, partial: j.meta.partial };
    };
    await waitFor(
      "the coordinator finding every call",
      async () => (await find()).ids.length >= expected.length || undefined,
      45_000,
      200,
    );
    // Every row in the lake's files, none left in a buffer: what the files hold is the whole answer.
    for (const node of layout.nodes)
      await waitFor(
        `${node.name} flushing its buffer`,
        async () => (await nodeSearch(node, layout.nodeToken, prefix, true)) === 0 || undefined,
        30_000,
        200,
      );
    const before = await find();
    expect(before.ids).toEqual(expected);
    // The first node of the lake answers for its files, the second for its buffer.
    expect(before.nodes.map((n) => [n.name, n.status, n.scope ?? "files"])).toEqual([
      ["node-1", "ok", "files"],
      ["node-2", "ok", "buffer"],
    ]);
    const dead = layout.nodes[0]!;
    dead.process.kill("SIGKILL");
    await dead.process.exited;
    const after = await find();
    expect(after.partial).toBe(true);
    expect(after.nodes.find((n) => n.name === dead.name)?.status).toBe("failed");
    // node-2 shares the lake: its files are still read, so only node-1's unflushed rows (none) could be missing.
    expect(after.ids).toEqual(expected);
  },
  120_000,
);
