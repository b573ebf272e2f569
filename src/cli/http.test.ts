import { describe, expect, test } from "bun:test";
import { UsageError } from "./args.ts";
import { baseUrl, insecureTlsFromEnv, maskForDebug, serverMessage } from "./http.ts";

describe("http helpers", () => {
  test.each([
    ["127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["http://h:1/", "http://h:1"],
    ["https://svc.example.com", "https://svc.example.com"],
    ["HTTPS://h:443//", "HTTPS://h:443"],
    [":8008", "http://127.0.0.1:8008"],
    ["[::1]:8080", "http://[::1]:8080"],
  ])("--host %p → %p", (host, url) => expect(baseUrl(host)).toBe(url));

  test("a bad host is a usage error", () => {
    expect(() => baseUrl("  ")).toThrow(UsageError);
    expect(() => baseUrl("h:port")).toThrow(UsageError);
  });

  test.each([
    ["1", true],
    ["true", true],
    ["YES", true],
    ["0", false],
    ["", false],
    ["no", false],
    [undefined, false],
  ])("SVC_INSECURE_TLS=%p → %p", (v, insecure) => expect(insecureTlsFromEnv({ SVC_INSECURE_TLS: v })).toBe(insecure));

  test("--debug never shows passwords or tokens", () => {
    expect(maskForDebug('{"username":"admin","password":"s3cr\\"et","token":"eyJ"}')).toBe(
      '{"username":"admin","password":"***","token":"***"}',
    );
    expect(maskForDebug("x".repeat(10), 4)).toBe("xxxx… (10 chars)");
  });

  test("server errors become one line", () => {
    expect(serverMessage({ status: 400, text: "", json: { error: "VALIDATION", message: "filter.x: bad" } })).toBe(
      "VALIDATION: filter.x: bad",
    );
    expect(serverMessage({ status: 502, text: "<html>\nBad gateway</html>", json: undefined })).toBe("<html>");
    expect(serverMessage({ status: 500, text: "", json: undefined })).toBe("HTTP 500");
  });
});
