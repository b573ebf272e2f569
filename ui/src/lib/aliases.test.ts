import { expect, test } from "bun:test";
import { ALIAS_CASES, ALIAS_ROWS } from "../../../test/fixtures/alias-cases.ts";
import { aliasFor, aliasMatcher, aliasScope } from "./aliases.ts";

// The same table as the server's resolver (src/settings/alias-resolver.test.ts).
test.each(ALIAS_CASES.map((c) => [...c]))("aliasFor(%s, %p, %p) → %p", (ip, port, captureId, name) => {
  expect(aliasFor(ALIAS_ROWS, ip as string, port as number | null, captureId as number | null)).toBe(
    name as string | undefined,
  );
});

test("the order of the rows does not change the answer, except between equal rows", () => {
  const reversed = aliasMatcher([...ALIAS_ROWS].reverse());
  for (const [ip, port, captureId, name] of ALIAS_CASES) {
    if (ip === "10.3.0.9") expect(reversed(ip, port, captureId)).toBe("second-loses");
    else expect(reversed(ip, port, captureId)).toBe(name);
  }
});

test("a port or capture id left out matches only rows without one", () => {
  const rows = [
    { ip: "192.0.2.10", name: "sip", active: true, port: 5060, capture_id: null },
    { ip: "192.0.2.10", name: "probe", active: true, port: null, capture_id: 9 },
  ];
  expect(aliasFor(rows, "192.0.2.10")).toBeUndefined();
  expect(aliasFor(rows, "192.0.2.10", 5060)).toBe("sip");
  expect(aliasFor(rows, "192.0.2.10", undefined, 9)).toBe("probe");
  expect(aliasFor(rows, "192.0.2.10", 5062, 8)).toBeUndefined();
  expect(aliasFor([{ ip: "192.0.2.0/24", name: "net", active: true }], "192.0.2.77", 5060, 1)).toBe("net");
  expect(aliasFor([{ ip: "192.0.2.0/33", name: "bad", active: true }], "192.0.2.77")).toBeUndefined();
});

test.each([
  [{ ip: "10.0.0.1", port: null, capture_id: null }, "10.0.0.1"],
  [{ ip: "10.0.0.0/8", port: 5060, capture_id: null }, "10.0.0.0/8:5060"],
  [{ ip: "2001:db8::1", port: 5061, capture_id: 2001 }, "[2001:db8::1]:5061 · capture 2001"],
  [{ ip: "10.0.0.1", port: null, capture_id: 7 }, "10.0.0.1 · capture 7"],
])("aliasScope %#", (row, text) => expect(aliasScope(row)).toBe(text));

test("equally specific rows: the oldest wins whatever the listed order (the server reads them oldest first)", () => {
  const rows = [
    { ip: "10.3.0.9", name: "newer", active: true, created_at: "2025-01-02T00:00:00.000Z" },
    { ip: "10.3.0.9", name: "older", active: true, created_at: "2025-01-01T00:00:00.000Z" },
  ];
  expect(aliasFor(rows, "10.3.0.9")).toBe("older");
  expect(aliasFor([...rows].reverse(), "10.3.0.9")).toBe("older");
});
