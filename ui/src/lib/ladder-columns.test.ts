import { describe, expect, test } from "bun:test";
import { aliasLookup, assignColumns, defaultColumnMode, sharedIps, type EndpointMessage } from "./ladder-columns.ts";

const m = (src: string, dst: string, extra: Partial<EndpointMessage> = {}): EndpointMessage => {
  const [sIp, sPort] = src.split("|");
  const [dIp, dPort] = dst.split("|");
  return {
    src_ip: sIp!,
    src_port: sPort ? Number(sPort) : 5060,
    dst_ip: dIp!,
    dst_port: dPort ? Number(dPort) : 5060,
    node_id: 2001,
    ...extra,
  };
};

// A B2BUA on one host: the caller talks to its 5060, it calls out from 5080 to the callee.
const SAME_HOST = [
  m("10.0.0.1", "10.0.0.9|5060"),
  m("10.0.0.9|5060", "10.0.0.1"),
  m("10.0.0.9|5080", "10.0.0.2"),
  m("10.0.0.2", "10.0.0.9|5080"),
];

describe("column assignment", () => {
  test("same IP on two ports is two columns by default (IP:port), one per IP when asked", () => {
    expect(sharedIps(SAME_HOST)).toEqual(new Set(["10.0.0.9"]));
    expect(defaultColumnMode(SAME_HOST)).toBe("ipport");
    const byPort = assignColumns(SAME_HOST, "ipport");
    expect(byPort.columns.map((c) => c.title)).toEqual([
      "10.0.0.1:5060",
      "10.0.0.9:5060",
      "10.0.0.9:5080",
      "10.0.0.2:5060",
    ]);
    expect(byPort.from).toEqual([0, 1, 2, 3]);
    expect(byPort.to).toEqual([1, 0, 3, 2]);
    const byIp = assignColumns(SAME_HOST, "ip");
    expect(byIp.columns.map((c) => c.title)).toEqual(["10.0.0.1", "10.0.0.9", "10.0.0.2"]);
    expect(byIp.columns.map((c) => c.port)).toEqual([null, null, null]);
    expect(byIp.from).toEqual([0, 1, 1, 2]);
  });

  test("one port per IP: IP columns by default; IPv6 with a port is bracketed", () => {
    const calls = [m("10.0.0.1", "10.0.0.2"), m("10.0.0.2", "10.0.0.1")];
    expect(defaultColumnMode(calls)).toBe("ip");
    expect(assignColumns(calls, "ip").columns.map((c) => c.key)).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(assignColumns([m("2001:db8::1", "2001:db8::2|5080")], "ipport").columns.map((c) => c.key)).toEqual([
      "[2001:db8::1]:5060",
      "[2001:db8::2]:5080",
    ]);
  });

  test("alias mode keeps shared-IP endpoints apart and titles them by alias, address below", () => {
    const lookup = aliasLookup([
      { ip: "10.0.0.9", name: "sbc", port: null },
      { ip: "10.0.0.9", name: "sbc-trunk", port: 5080 },
    ]);
    const cols = assignColumns(SAME_HOST, "alias", lookup).columns;
    expect(cols.map((c) => [c.title, c.subtitle])).toEqual([
      ["10.0.0.1", ""],
      ["sbc", "10.0.0.9:5060"],
      ["sbc-trunk", "10.0.0.9:5080"],
      ["10.0.0.2", ""],
    ]);
    expect(cols[2]!.name).toBe("sbc-trunk (10.0.0.9:5080)");
    // IP:port mode: the address is the title, the alias (IP:port first, then IP) below.
    expect(assignColumns(SAME_HOST, "ipport", lookup).columns.map((c) => c.subtitle)).toEqual([
      "",
      "sbc",
      "sbc-trunk",
      "",
    ]);
  });

  test("without the alias list the server's row aliases name the columns", () => {
    const cols = assignColumns([m("10.0.0.1", "10.0.0.2", { dst_alias: "gw" })], "ip").columns;
    expect(cols.map((c) => c.name)).toEqual(["10.0.0.1", "10.0.0.2 (gw)"]);
    // With a list, the list decides (it has no entry here).
    expect(
      assignColumns([m("10.0.0.1", "10.0.0.2", { dst_alias: "gw" })], "ip", aliasLookup([])).columns[1]!.alias,
    ).toBeNull();
  });
});

describe("alias lookup", () => {
  const lookup = aliasLookup([
    { ip: "10.0.0.0/8", name: "core" },
    { ip: "10.1.2.3", name: "sbc-1" },
    { ip: "10.1.2.3", name: "sbc-1-tls", port: 5061 },
    { ip: "10.1.2.3", name: "sbc-1-edge-b", capture_id: 2002 },
    { ip: "10.1.2.4", name: "off", active: false },
    { ip: "2001:db8::/32", name: "v6-net" },
  ]);
  test.each([
    ["10.1.2.3", 5060, ["2001"], "sbc-1"],
    ["10.1.2.3", 5061, ["2001"], "sbc-1-tls"],
    ["10.1.2.3", 5060, ["2002"], "sbc-1-edge-b"],
    ["10.1.2.3", 5061, ["2002"], "sbc-1-tls"],
    ["10.1.2.3", null, [], "sbc-1"],
    ["10.9.9.9", 5060, [], "core"],
    ["10.1.2.4", 5060, [], "core"],
    ["::ffff:10.1.2.3", 5060, [], "sbc-1"],
    ["2001:db8:0:0::7", 5060, [], "v6-net"],
    ["192.168.1.1", 5060, [], null],
    ["not-an-ip", 5060, [], null],
  ] as const)("%s port %p captures %p → %p", (ip, port, caps, name) => {
    expect(lookup(ip, port, caps)).toBe(name);
  });
});
