import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { dashboardUrl, firstRunBanner } from "./first-run.ts";

const admin = { username: "admin", password: "Pw-123456789012345" };

describe("first-run banner", () => {
  test("names the user, the password, the URL and the reset command with the config path", () => {
    const text = firstRunBanner(admin, { url: "http://127.0.0.1:8080/", configPath: "/etc/svc/svc.json" });
    const lines = text.split("\n");
    expect(lines).toContain("   URL:       http://127.0.0.1:8080/");
    expect(lines).toContain("   user:      admin");
    expect(lines).toContain("   password:  Pw-123456789012345");
    expect(lines).toContain("   svc reset-admin-password --config-path /etc/svc/svc.json");
    expect(text.split(admin.password)).toHaveLength(2);
  });

  test("under systemd the reset runs as the service's user; without a URL it says the start failed", () => {
    const text = firstRunBanner(admin, { runAs: "svc" });
    expect(text.split("\n")).toContain("   sudo -u svc svc reset-admin-password");
    expect(text).toContain("   URL:       (the appliance did not start: see the error below)");
  });

  test.each([
    ["0.0.0.0", "http://127.0.0.1:8080", `http://${hostname()}:8080/`],
    ["::", "http://[::1]:8080", `http://${hostname()}:8080/`],
    ["127.0.0.1", "http://127.0.0.1:18080", "http://127.0.0.1:18080/"],
  ])("dashboardUrl(%s, %s) = %s", (host, bound, expected) => {
    expect(dashboardUrl(host, bound)).toBe(expected);
  });
});
