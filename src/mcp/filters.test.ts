import { describe, expect, test } from "bun:test";
import { mergeFilters } from "./filters.ts";
import { parseWithRegex } from "./phrases.ts";

const NOW = Date.UTC(2026, 10, 26, 14, 30, 0);
const MIDNIGHT = Date.UTC(2026, 10, 26);

describe("regex parser", () => {
  test.each([
    ["INVITE from caller alice", { method: "INVITE", from_user: "alice" }],
    ["invites to_user=bob", { method: "INVITE", to_user: "bob" }],
    ["REGISTER and OPTIONS", { method: "REGISTER;OPTIONS" }],
    ["show the message method MESSAGE", { method: "MESSAGE" }],
    ["update me about info", {}],
    ["src ip 10.0.0.1 dst ip 10.0.0.2", { src_ip: "10.0.0.1", dst_ip: "10.0.0.2" }],
    ["source ip: 2001:db8::1 destination ip = 192.168.1.20", { src_ip: "2001:db8::1", dst_ip: "192.168.1.20" }],
    ["call-id abc-123@host", { call_id: "abc-123@host" }],
    ["call_id 'drop table x'", { call_id: "drop table x" }],
    ["session-id: s1", { call_id: "s1" }],
    ["from_user 1001 callee 2002", { from_user: "1001", to_user: "2002" }],
  ])("%p", (text, want) => {
    const got = parseWithRegex(text, NOW);
    const { time_range_label, from_ms, to_ms, ...filters } = got;
    expect(filters).toEqual(want);
    expect({ time_range_label, from_ms, to_ms }).toEqual({
      time_range_label: "last_hour",
      from_ms: NOW - 3_600_000,
      to_ms: NOW,
    });
  });

  test.each([
    ["calls today", "today", MIDNIGHT, NOW],
    ["Anrufe heute", "today", MIDNIGHT, NOW],
    ["yesterday", "yesterday", MIDNIGHT - 86_400_000, MIDNIGHT - 1],
    ["gestern", "yesterday", MIDNIGHT - 86_400_000, MIDNIGHT - 1],
    ["in der letzten Stunde", "last_hour", NOW - 3_600_000, NOW],
    ["past hour", "last_hour", NOW - 3_600_000, NOW],
    ["last 15 minutes", "last_15_minutes", NOW - 900_000, NOW],
    ["letzte 2 Stunden", "last_2_hours", NOW - 7_200_000, NOW],
  ])("time words: %p", (text, label, from, to) => {
    expect(parseWithRegex(text, NOW)).toMatchObject({ time_range_label: label, from_ms: from, to_ms: to });
  });

  test("the model's members win, the regex fills the rest; a model range replaces the default", () => {
    const regex = parseWithRegex("INVITE caller alice dst ip 10.0.0.9", NOW);
    expect(mergeFilters({ from_ms: 5, to_ms: 2 }, regex)).toMatchObject({
      time_range_label: "last_hour",
      from_ms: NOW - 3_600_000,
    });
    expect(mergeFilters({ method: "BYE", from_ms: 1, to_ms: 2 }, regex)).toEqual({
      method: "BYE",
      from_user: "alice",
      dst_ip: "10.0.0.9",
      time_range_label: "custom",
      from_ms: 1,
      to_ms: 2,
    });
  });
});
