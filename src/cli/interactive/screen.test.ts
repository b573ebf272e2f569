import { describe, expect, test } from "bun:test";
import { formFrame, resultsFrame, screenLines } from "./screen.ts";
import { FORM_FIELDS, initialState } from "./state.ts";

const plain = (l: string) => l.replace(/\x1b\[[0-9;]*m/g, "");

describe("interactive screens", () => {
  test("form: exactly height lines within width, the focused field marked, the password hidden", () => {
    const s = { ...initialState({ host: "10.0.0.1:8080", user: "admin", pass: "secret" }), status: "error: x" };
    const f = formFrame(s, 80, 30);
    expect(f.length).toBe(30);
    for (const l of f) expect([...plain(l)].length).toBeLessThanOrEqual(80);
    expect(f[0]).toStartWith("svc search · interactive");
    expect(f.find((l) => l.includes("Host"))).toBe("  Host        10.0.0.1:8080");
    expect(f.find((l) => l.includes("Password"))).toBe("  Password    ••••••");
    expect(plain(f.find((l) => l.startsWith("›"))!)).toBe("› Call-ID      ");
    expect(f.find((l) => l.includes("Format"))).toBe("  Format      ◀ table ▶");
    expect(f.at(-1)).toBe("error: x");
  });

  test("form on a small terminal scrolls so the focused field is visible", () => {
    const s = { ...initialState({ host: "h" }), focus: FORM_FIELDS.length - 1 };
    const f = formFrame(s, 60, 10);
    expect(f.length).toBe(10);
    expect(f.some((l) => l.startsWith("› Format"))).toBe(true);
    expect(f.some((l) => l.includes("Host"))).toBe(false);
  });

  test("results: title, the visible window of lines, position and notes", () => {
    const s = {
      ...initialState({ host: "h" }),
      mode: "results" as const,
      scroll: 2,
      status: "Post-filter x: 3 → 1 rows",
    };
    const lines = Array.from({ length: 20 }, (_x, i) => `line ${i + 1}`);
    const f = resultsFrame(s, lines, "20 rows", 100, 8);
    expect(f.length).toBe(8);
    expect(f[0]).toStartWith("svc search · 20 rows · table");
    expect(f.slice(1, 7)).toEqual(["line 3", "line 4", "line 5", "line 6", "line 7", "line 8"]);
    expect(f[7]).toBe("lines 3-8 of 20 · Post-filter x: 3 → 1 rows");
  });

  test("output becomes screen lines: CRLF records, tabs, control characters", () => {
    expect(screenLines('a,b\r\n"x\ry",\x1b[31m\tz\r\n')).toEqual(["a,b", '"x', 'y",\ufffd[31m    z']);
  });
});
