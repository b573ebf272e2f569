import { describe, expect, test } from "bun:test";
import { MultipartReader, multipartBoundary, type PartHeaders } from "./multipart.ts";

interface Part extends PartHeaders {
  body: Uint8Array;
}

/** Feeds `body` in pieces of `size` bytes; the parts as the sink saw them. */
async function parse(body: Uint8Array, boundary: string, size: number) {
  const parts: Part[] = [];
  let current: { headers: PartHeaders; pieces: Uint8Array[] } | null = null;
  const reader = new MultipartReader(boundary, {
    start: (headers) => {
      current = { headers, pieces: [] };
    },
    // Copied: a piece is valid only during the call.
    data: (bytes) => void current!.pieces.push(bytes.slice()),
    end: () => {
      parts.push({ ...current!.headers, body: Buffer.concat(current!.pieces) });
      current = null;
    },
  });
  for (let i = 0; i < body.length; i += size) {
    const r = await reader.push(body.subarray(i, i + size));
    if (!r.ok) return { parts, result: r };
  }
  return { parts, result: reader.finish() };
}

/** Body and boundary exactly as Bun's fetch encodes a FormData. */
async function encoded(form: FormData): Promise<{ body: Uint8Array; boundary: string }> {
  const res = new Response(form);
  const boundary = multipartBoundary(res.headers.get("content-type") ?? "");
  if (boundary === null) throw new Error("no boundary");
  return { body: new Uint8Array(await res.arrayBuffer()), boundary };
}

describe("MultipartReader", () => {
  // Bytes that look like the start of a delimiter inside the file must stay file content.
  const file = new Uint8Array(5000).map((_x, i) =>
    i % 97 === 0 ? 13 : i % 89 === 0 ? 10 : i % 83 === 0 ? 45 : i & 0xff,
  );
  test.each([1, 2, 7, 64, 1000, 1 << 20])("fields and a binary file, fed %p bytes at a time", async (size) => {
    const form = new FormData();
    form.append("override_to_current_time", "true");
    form.append("file", new File([file], 'cap ture".pcap'));
    form.append("force_sip_table", "registration");
    const { body, boundary } = await encoded(form);
    const { parts, result } = await parse(body, boundary, size);
    expect(result.ok).toBe(true);
    expect(parts.map((p) => [p.name, p.filename ?? null])).toEqual([
      ["override_to_current_time", null],
      ["file", expect.stringContaining("cap") as unknown as string],
      ["force_sip_table", null],
    ]);
    expect(new TextDecoder().decode(parts[0]!.body)).toBe("true");
    expect(Buffer.compare(parts[1]!.body, file)).toBe(0);
    expect(new TextDecoder().decode(parts[2]!.body)).toBe("registration");
  });

  test("a preamble, transport padding and an epilogue are ignored; quoted names are unescaped", async () => {
    const body = new TextEncoder().encode(
      'ignored preamble\r\n--xyz  \r\nContent-Disposition: form-data; name="a\\"b"\r\n\r\nvalue\r\n--xyz--\r\nepilogue',
    );
    const { parts, result } = await parse(body, "xyz", 3);
    expect(result.ok).toBe(true);
    expect(parts.map((p) => [p.name, new TextDecoder().decode(p.body)])).toEqual([['a"b', "value"]]);
  });

  test.each([
    ["no closing boundary", '--b\r\nContent-Disposition: form-data; name="f"\r\n\r\nabc', "unterminated"],
    ["a part without Content-Disposition", "--b\r\nContent-Type: text/plain\r\n\r\nabc\r\n--b--", "bad_headers"],
    ["a part without headers", "--b\r\n\r\nabc\r\n--b--", "bad_headers"],
    ["not form-data", '--b\r\nContent-Disposition: attachment; name="f"\r\n\r\nabc\r\n--b--', "bad_headers"],
    ["endless headers", `--b\r\nX-Long: ${"x".repeat(20_000)}`, "headers_too_large"],
  ])("%s is refused (%s)", async (_name, text, reason) => {
    const { result } = await parse(new TextEncoder().encode(text), "b", 1000);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe(reason as "unterminated");
  });

  test.each([
    ["multipart/form-data; boundary=abc", "abc"],
    ['Multipart/Form-Data; charset=utf-8; boundary="a b:c"', "a b:c"],
    ["multipart/form-data", null],
    ["application/json; boundary=abc", null],
    ["multipart/form-dataX; boundary=abc", null],
  ])("boundary of %p is %p", (type, want) => {
    expect(multipartBoundary(type)).toBe(want);
  });
});
