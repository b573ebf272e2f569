import { describe, expect, test } from "bun:test";
import { lineOfPath, pathOfMessage, syntaxErrorLine } from "./json-lines.ts";

const DOC = JSON.stringify(
  {
    hepid: 1,
    profile: "call",
    fields_mapping: [
      { id: "a", name: "A" },
      { id: "b", selector: [{ name: "x", value: 1 }] },
      { id: "c", name: 'C, "quoted" {' },
    ],
  },
  null,
  2,
);
const lineOf = (needle: string) => DOC.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("lineOfPath", () => {
  test.each([
    [["profile"], lineOf('"profile"')],
    [["fields_mapping"], lineOf('"fields_mapping"')],
    [["fields_mapping", 1, "selector"], lineOf('"selector"')],
    [["fields_mapping", 1, "selector", 0, "value"], lineOf('"value": 1')],
    [["fields_mapping", 2, "name"], lineOf('"C, ')],
    // a missing member: the deepest existing parent (the object at index 0)
    [["fields_mapping", 0, "selector"], lineOf('"id": "a"') - 1],
  ])("%o", (path, line) => expect(lineOfPath(DOC, path)).toBe(line));
});

test.each([
  ["fields_mapping.3.selector: required (non-empty)", ["fields_mapping", 3, "selector"]],
  ["fields_mapping[2].virtual.path: bad", ["fields_mapping", 2, "virtual", "path"]],
  ["hep_alias: Expected string", ["hep_alias"]],
  ["no path here", undefined],
])("pathOfMessage %s", (msg, path) => expect(pathOfMessage(msg)).toEqual(path as ReturnType<typeof pathOfMessage>));

test.each([
  ['{\n  "a": 1,\n  "b": ,\n}', 3],
  ['{\n  "a": 1,\n}', 3],
  ['{\n  "a": 1 // note\n}', 2],
  ['{\n  "a": [1, 2\n', 3],
  ['{"a": 1}', undefined],
])("syntaxErrorLine %j", (text, line) => expect(syntaxErrorLine(text)).toBe(line));
