import { describe, expect, test } from "bun:test";
import { ALIAS_CASES, ALIAS_ROWS } from "../../test/fixtures/alias-cases.ts";
import { createAliasResolver } from "./alias-resolver.ts";

const resolve = createAliasResolver([
  { ip: "10.0.0.0/8", name: "core", active: true },
  { ip: "10.1.0.0/16", name: "site-a", active: true },
  { ip: "10.1.2.3", name: "sbc-1", active: true },
  { ip: "10.2.0.0/16", name: "disabled-net", active: false },
  { ip: "2001:db8::/32", name: "v6-lab", active: true },
  { ip: "2001:db8:1::10/128", name: "v6-host", active: true },
  { ip: "not-an-ip", name: "broken", active: true },
]);

test.each([
  ["10.1.2.3", "sbc-1"],
  ["::ffff:10.1.2.3", "sbc-1"],
  ["10.1.9.9", "site-a"],
  ["10.2.0.1", "core"],
  ["10.200.0.1", "core"],
  ["2001:db8:1::10", "v6-host"],
  ["2001:db8:1::11", "v6-lab"],
  ["192.0.2.1", undefined],
  ["garbage", undefined],
])("resolveAlias(%s) → %p (most specific active entry)", (ip, name) => {
  expect(resolve(ip)).toBe(name);
});

describe("with port and capture id (test/fixtures/alias-cases.ts, shared with the browser's aliasFor)", () => {
  const withPorts = createAliasResolver(
    ALIAS_ROWS.map((r) => ({ ip: r.ip, name: r.name, active: r.active, port: r.port, captureId: r.capture_id })),
  );
  test.each(ALIAS_CASES.map((c) => [...c]))("resolveAlias(%s, %p, %p) → %p", (ip, port, captureId, name) => {
    expect(withPorts(ip as string, port as number | null, captureId as number | null)).toBe(name as string | undefined);
  });
});
