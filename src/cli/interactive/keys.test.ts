import { describe, expect, test } from "bun:test";
import { parseKeys } from "./keys.ts";

describe("parseKeys", () => {
  test.each([
    ["\t", ["tab"]],
    ["\x1b[Z", ["backtab"]],
    ["\r", ["enter"]],
    ["\x1b", ["escape"]],
    ["\x1b[A\x1b[B\x1b[C\x1b[D", ["up", "down", "right", "left"]],
    ["\x1bOA\x1bOB", ["up", "down"]],
    ["\x1b[5~\x1b[6~", ["pageup", "pagedown"]],
    ["\x1b[H\x1b[F\x1b[1~\x1b[4~", ["home", "end", "home", "end"]],
    ["\x1b[3~", ["delete"]],
    ["\x1b[1;5A", ["up"]],
    ["\x7f\b", ["backspace", "backspace"]],
    ["\x03", ["ctrl-c"]],
    ["\x15", ["ctrl-u"]],
    ["\x1b[99~", []],
    ["\x1b[", []],
    ["\x01\x02", []],
  ])("%j → %p", (input, names) => expect(parseKeys(input).map((k): string => k.name)).toEqual(names as string[]));

  test("typed and pasted text is one char key per code point", () => {
    expect(parseKeys("aé😀 ").map((k) => k.ch)).toEqual(["a", "é", "😀", " "]);
    expect(parseKeys("ab\tc\x1b").map((k) => k.name)).toEqual(["char", "char", "tab", "char", "escape"]);
  });
});
