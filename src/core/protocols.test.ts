import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { seedMappingRows } from "../settings/mapping-seed.ts";
import { hepTableKey, hepTableName, mediaProtos, PROTOCOLS, parseProto, protoLabel, protoName } from "./protocols.ts";

test("ids and names are unique; names parse back to their ids", () => {
  expect(new Set(PROTOCOLS.map((p) => p.id)).size).toBe(PROTOCOLS.length);
  const named = PROTOCOLS.filter((p) => p.name);
  expect(new Set(named.map((p) => p.name)).size).toBe(named.length);
  for (const p of named) expect(parseProto(p.name!.toUpperCase().replace("_", " "))).toBe(p.id);
  expect([parseProto("OTLP-Traces"), parseProto("65535"), parseProto("65536"), parseProto("otlp")]).toEqual([
    200,
    65535,
    undefined,
    undefined,
  ]);
  expect([protoName(35), protoName(53), protoLabel(35), protoLabel(7)]).toEqual(["dns", "53", "DNS (35)", "HEP 7"]);
});

test("table names: SIP by event type, every other HEP type in its default table", () => {
  expect([hepTableName(1, "registration"), hepTableName(35), hepTableKey(1, "call"), hepTableKey(100)]).toEqual([
    "hep_proto_1_registration",
    "hep_proto_35_default",
    "main.hep_proto_1_call",
    "main.hep_proto_100_default",
  ]);
  expect([mediaProtos(), mediaProtos("rtcp")]).toEqual([[5, 34, 35], [5]]);
});

test("the shipped mappings are labelled by the registry, one per protocol and event type", () => {
  const seeded = seedMappingRows();
  for (const p of PROTOCOLS.filter((x) => x.id !== 300)) {
    for (const e of p.eventTypes)
      expect(seeded.find((m) => m.hepid === p.id && m.profile === e)?.hepAlias).toBe(p.label);
  }
  for (const m of seeded) expect(PROTOCOLS.some((p) => p.id === m.hepid)).toBe(true);
});

test('no file spells a HEP table\'s key by hand: the registry builds it (docs/API.md "Protocol types")', () => {
  const root = join(import.meta.dir, "../..");
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
    });
  const found: string[] = [];
  for (const file of [...walk(join(root, "src")), ...walk(join(root, "ui/src"))]) {
    if (file.endsWith("core/protocols.ts")) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/^\s*(\/?\*|\/\/)/.test(line)) return;
        if (/["'`](svc_lake\.)?main\.hep_proto_|`hep_proto_\$\{/.test(line))
          found.push(`${relative(root, file)}:${i + 1}`);
      });
  }
  expect(found).toEqual([]);
});
