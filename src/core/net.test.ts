import { describe, expect, test } from "bun:test";
import { AppError } from "./errors.ts";
import { formatAddress, listenError, parseListen, splitHostPort } from "./net.ts";

describe("listen addresses", () => {
  test("parseListen reads the config forms and refuses the rest naming the key", () => {
    expect(parseListen(":9060")).toEqual({ hostname: "0.0.0.0", port: 9060 });
    expect(parseListen("127.0.0.1:0")).toEqual({ hostname: "127.0.0.1", port: 0 });
    expect(parseListen("[::1]:9060")).toEqual({ hostname: "::1", port: 9060 });
    expect(() => parseListen("9060", "ingest.hep.udp.listen")).toThrow(
      /ingest\.hep\.udp\.listen: "9060" is not host:port/,
    );
    expect(() => parseListen(":70000", "k")).toThrow(/port 70000 is out of range/);
    expect(formatAddress("::1", 9060)).toBe("[::1]:9060");
    expect(formatAddress("127.0.0.1", 9060)).toBe("127.0.0.1:9060");
  });

  test("listenError says which listener, address and key, and why in words", () => {
    // Bun's message for a taken TCP port names neither the port nor the reason; its code does.
    const taken = Object.assign(new Error("Failed to listen at 127.0.0.1"), { code: "EADDRINUSE" });
    const e = listenError("hep-tcp", "127.0.0.1:9060", "ingest.hep.tcp.listen", taken);
    expect(e).toBeInstanceOf(AppError);
    expect(e.message).toBe(
      "hep-tcp: cannot listen on 127.0.0.1:9060 (ingest.hep.tcp.listen): address already in use (another process, or another listener of this config, has it)",
    );
    expect(listenError("x", ":80", "k", Object.assign(new Error("no"), { code: "EACCES" })).message).toMatch(
      /permission denied \(ports below 1024 need CAP_NET_BIND_SERVICE\)$/,
    );
    expect(listenError("x", ":1", "k", new Error("something else")).message).toBe(
      "x: cannot listen on :1 (k): something else",
    );
    // The hint (which key shares a port on purpose) only when the port is taken.
    expect(listenError("x", ":1", "k", taken, "; hint").message).toEndWith("has it); hint");
    expect(listenError("x", ":1", "k", new Error("other"), "; hint").message).toBe("x: cannot listen on :1 (k): other");
  });
});

describe("splitHostPort", () => {
  test.each([
    ["127.0.0.1:5060", undefined, { hostname: "127.0.0.1", port: 5060 }],
    ["[::1]:9060", undefined, { hostname: "::1", port: 9060 }],
    [":8080", undefined, { hostname: "0.0.0.0", port: 8080 }],
    ["pbx.example.com", 5060, { hostname: "pbx.example.com", port: 5060 }],
    ["[2001:db8::1]", 5061, { hostname: "2001:db8::1", port: 5061 }],
    ["pbx.example.com", undefined, undefined],
    ["a:b:c", 5060, undefined],
    ["[::1", 5060, undefined],
    ["host:port", 5060, undefined],
  ] as const)("%s (default port %p) → %p", (text, defaultPort, want) => {
    expect(splitHostPort(text, defaultPort)).toEqual(want);
  });
});
