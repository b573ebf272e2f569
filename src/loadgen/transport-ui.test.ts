import { describe, expect, test } from "bun:test";
import { parseInjection } from "./injection.ts";
import { DEFAULT_OPTIONS, type LoadgenOptions } from "./options.ts";
import { transportMode } from "./transport.ts";
import { checkPerIpOptions, PerIpSockets } from "./transport-ui.ts";

const o = (x: Partial<LoadgenOptions>): LoadgenOptions => ({ ...DEFAULT_OPTIONS, listeners: [], ...x });
const check =
  (x: Partial<LoadgenOptions>, client = true) =>
  () =>
    checkPerIpOptions(o(x), client, [transportMode(x.transport ?? "u1")]);

describe("-t ui and -ip_field option rules", () => {
  test("ui is a UDP mode with one socket per IP, listed in the transport error", () => {
    expect(transportMode("ui")).toEqual({ kind: "udp", perCall: false, perIp: true });
    expect(() => transportMode("uu")).toThrow(/transport "uu" is not one of u1, un, ui, t1, tn, l1, ln/);
  });

  test.each([
    [
      { transport: "ui" },
      true,
      /-t ui needs -inf <file>: the injection file names each call's source IP \(field -ip_field, default 0\)/,
    ],
    [{ transport: "ui", ip_field: 1 }, true, /-t ui needs -inf <file>/],
    [{ ip_field: 1 }, true, /-ip_field 1 needs -t ui/],
    [{ transport: "un", ip_field: 0, injection_file: "u.csv" }, true, /-ip_field 0 needs -t ui/],
    [{ transport: "ui", injection_file: "u.csv" }, false, /transport ui is for client scenarios/],
  ])("%j (client %p) is refused", (x, client, message) => {
    expect(check(x, client)).toThrow(message);
  });

  test("ui with -inf, with or without -ip_field, and other transports without -ip_field pass", () => {
    expect(check({ transport: "ui", injection_file: "u.csv" })).not.toThrow();
    expect(check({ transport: "ui", injection_file: "u.csv", ip_field: 2 })).not.toThrow();
    expect(check({ transport: "u1" })).not.toThrow();
    expect(check({ transport: "un", injection_file: "u.csv" }, false)).not.toThrow();
  });

  test("a server listener with transport ui is refused even when the engine default is u1", () => {
    expect(() => checkPerIpOptions(o({}), false, [transportMode("u1"), transportMode("ui")])).toThrow(
      /transport ui is for client scenarios/,
    );
  });
});

describe("injection rows of -t ui", () => {
  const rows = (text: string, field: number) => () =>
    new PerIpSockets(parseInjection(text, "users.csv"), field, "users.csv");

  test.each([
    ["SEQUENTIAL\nalice;127.0.0.2\nbob\n", 1, /users.csv line 3: no field 1 \(-ip_field 1 names each call's source IP/],
    [
      "SEQUENTIAL\n# comment\n\nalice;127.0.0.2\nbob;pc-of-bob\n",
      1,
      /users.csv line 5: field 1 is "pc-of-bob", not an IP address/,
    ],
    ["SEQUENTIAL\nalice\n", 0, /users.csv line 2: field 0 is "alice", not an IP address \(-ip_field 0, -t ui\)/],
  ])("%j field %d is refused naming the line", (text, field, message) => {
    expect(rows(text, field)).toThrow(message);
  });

  test("IPv4 and IPv6 addresses pass; -ip_field unset (-1) reads field 0", () => {
    expect(rows("RANDOM\n127.0.0.2;a\n::1;b\n", 0)).not.toThrow();
    expect(rows("USER\n 127.0.0.2 ;a\n", -1)).not.toThrow();
    expect(rows("USER\na;127.0.0.2\n", -1)).toThrow(/field 0 is "a"/);
  });
});
