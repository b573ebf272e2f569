import { describe, expect, test } from "bun:test";
import { exclusionMatcher, resolveExclusions, withoutExcluded } from "./exclusions.ts";

describe("resolveExclusions", () => {
  const aliases: Record<string, string[]> = { sbc: ["10.9.0.0/16", "2001:db8::5"], empty: [] };
  const base = { aliasAddresses: (n: string) => aliases[n] ?? [] };

  test("whitelist plus the enabled defaults; disabled entries and blank strings are left out; deduplicated", () => {
    const got = resolveExclusions({
      ...base,
      whitelist: ["10.0.0.4", " ", "10.0.0.4", "192.168.0.0/24"],
      useDefaults: true,
      defaults: [
        { ip: "172.16.0.1", disabled: false },
        { ip: "172.16.0.2", disabled: true },
        { alias: "sbc", disabled: false },
        { alias: "empty", disabled: false },
      ],
    });
    expect(got).toEqual(["10.0.0.4", "192.168.0.0/24", "172.16.0.1", "10.9.0.0/16", "2001:db8::5"]);
  });

  test("use_default_exclusions false keeps only the request's list", () => {
    expect(
      resolveExclusions({
        ...base,
        whitelist: ["10.0.0.4"],
        useDefaults: false,
        defaults: [{ ip: "172.16.0.1", disabled: false }],
      }),
    ).toEqual(["10.0.0.4"]);
  });
});

describe("exclusionMatcher", () => {
  test.each([
    ["10.0.0.4", "10.0.0.4", true],
    ["10.0.0.4", "10.0.0.5", false],
    ["10.0.0.0/8", "10.200.1.1", true],
    ["10.0.0.0/8", "11.0.0.1", false],
    ["10.0.0.4", "::ffff:10.0.0.4", true],
    ["2001:db8::/32", "2001:db8:1::7", true],
    ["2001:db8::/32", "2001:db9::7", false],
    ["2001:db8::1", "2001:0db8:0:0:0:0:0:1", true],
    ["10.0.0.0/8", "fe80::1", false],
    ["not-an-ip", "not-an-ip", true],
    ["not-an-ip", "10.0.0.1", false],
  ])("%s excludes %s: %p", (entry, ip, hit) => {
    expect(exclusionMatcher([entry])(ip)).toBe(hit);
  });

  test("non-string values are never excluded; an empty list excludes nothing", () => {
    expect(exclusionMatcher(["10.0.0.0/8"])(null)).toBe(false);
    expect(exclusionMatcher([])("10.0.0.1")).toBe(false);
  });

  test("a message goes when either side is excluded", () => {
    const items = [
      { n: 1, src_ip: "10.0.0.1", dst_ip: "10.0.0.2" },
      { n: 2, src_ip: "10.0.0.2", dst_ip: "10.0.0.4" },
      { n: 3, src_ip: "10.0.0.4", dst_ip: "10.0.0.2" },
    ];
    expect(withoutExcluded(items, exclusionMatcher(["10.0.0.4"])).map((i) => i.n)).toEqual([1]);
  });
});
