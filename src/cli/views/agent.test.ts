import { describe, expect, test } from "bun:test";
import { formatUptime, healthView, renderAgentStats, renderHealth } from "./agent.ts";

// The documented shape of a capture agent's GET /api/stats (heplify docs/API.md).
const STATS = {
  node_name: "edge-1",
  node_id: 7,
  uuid: "550e8400-e29b-41d4-a716-446655440000",
  interfaces: ["eth0", "eth1"],
  uptime_seconds: 3600,
  uptime: "1h0m0s",
  packets: {
    total: 1500,
    sip: 1200,
    rtcp: 100,
    rtcp_fail: 10,
    rtp: 0,
    dns: 5,
    log: 0,
    hep_sent: 1300,
    duplicates: 5,
    unknown: 180,
  },
  transport: [
    { addr: "homer.example.com:9060", proto: "tcp", connected: true, reconnects: 0, sent: 1300, errors: 0 },
    { addr: "10.0.0.9:9060", proto: "udp", connected: false, reconnects: 4, sent: 0, errors: 12 },
  ],
};

describe("agent views", () => {
  test("stats: node, every packet counter, the transport table", () => {
    expect(renderAgentStats(STATS, 100)).toEqual([
      "Node",
      "  node_name   edge-1",
      "  node_id     7",
      "  interfaces  eth0, eth1",
      "  uptime      1h0m0s",
      "",
      "Packets",
      "  total       1500",
      "  sip         1200",
      "  rtcp        100",
      "  rtcp_fail   10",
      "  rtp         0",
      "  dns         5",
      "  log         0",
      "  hep_sent    1300",
      "  duplicates  5",
      "  unknown     180",
      "",
      "Transports",
      "  addr                    proto  connected  reconnects  sent  errors",
      "  ----------------------  -----  ---------  ----------  ----  ------",
      "  homer.example.com:9060  tcp    yes        0           1300  0",
      "  10.0.0.9:9060           udp    no         4           0     12",
    ]);
  });

  test("missing members print -, uptime in seconds is formatted, `transports` is accepted too", () => {
    const out = renderAgentStats(
      { node_name: "x", uptime: 93784, packets: { sip: 3 }, transports: [{ addr: "a:1", connected: 1 }] },
      100,
    );
    expect(out).toContain("  node_id     -");
    expect(out).toContain("  uptime      1d2h3m4s");
    expect(out).toContain("  total       -");
    expect(out).toContain("  sip         3");
    expect(out.at(-1)).toBe("  a:1   -      1          -           -     -");
    expect(renderAgentStats(null, 80).slice(-2)).toEqual(["Transports", "  (none)"]);
    expect([formatUptime(0), formatUptime(59), formatUptime(60), formatUptime(3601)]).toEqual([
      "0s",
      "59s",
      "1m0s",
      "1h0m1s",
    ]);
  });

  test.each([
    [
      { status: "ok", connected_transports: 1, queue_size: 3, buffer_size_bytes: 2048 },
      { status: "ok", connectedTransports: 1, queue: 3, bufferBytes: 2048 },
    ],
    [
      { status: "ok", connected_transports: 0, queue_size: 0, buffer_size_bytes: 0 },
      { status: "DEGRADED", connectedTransports: 0, queue: 0, bufferBytes: 0 },
    ],
    [{ status: "degraded" }, { status: "DEGRADED" }],
    [{ status: "ok" }, { status: "ok" }],
    [{}, { status: "DEGRADED" }],
  ])("health %p → %p", (h, v) => expect(healthView(h)).toEqual(v as ReturnType<typeof healthView>));

  test("health lines", () => {
    expect(renderHealth({ status: "DEGRADED", connectedTransports: 0, queue: 12, bufferBytes: 4096 })).toEqual([
      "status                DEGRADED",
      "connected_transports  0",
      "queue                 12",
      "buffer                4096 bytes",
    ]);
    expect(renderHealth({ status: "ok" })).toEqual([
      "status                ok",
      "connected_transports  -",
      "queue                 -",
      "buffer                -",
    ]);
  });
});
