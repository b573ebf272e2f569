import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { loadConfig } from "../config/index.ts";
import { dashboardUrl, envName, firstRunBanner, listenRows } from "./first-run.ts";

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

describe("first-run banner: where svc listens", () => {
  test("every listener of the effective config with its key and SVC_ variable, and how to bind to one address", () => {
    const { config } = loadConfig({
      json: { ingest: { line_protocol: { enable: true, listen: "10.0.0.5:8086" } } },
      env: { SVC_INGEST_HEP_UDP_LISTEN: "127.0.0.1:9070" },
    });
    const text = firstRunBanner(admin, { url: "http://h:8080/", listening: listenRows(config) });
    const line = (what: string) =>
      text
        .split("\n")
        .find((l) => l.startsWith(`   ${what} `))
        ?.replace(/\s+/g, " ");
    expect(line("dashboard + API")).toBe(
      " dashboard + API :8080 (every interface) coordinator.http_server.listen / SVC_COORDINATOR_HTTP_SERVER_LISTEN",
    );
    expect(line("node API")).toBe(" node API 127.0.0.1:8081 node.http_server.listen / SVC_NODE_HTTP_SERVER_LISTEN");
    expect(line("HEP UDP")).toBe(" HEP UDP 127.0.0.1:9070 ingest.hep.udp.listen / SVC_INGEST_HEP_UDP_LISTEN");
    expect(line("HEP TCP")).toBe(" HEP TCP :9060 (every interface) ingest.hep.tcp.listen / SVC_INGEST_HEP_TCP_LISTEN");
    expect(line("HEP TLS")).toBe(
      " HEP TLS off (set ingest.hep.tls.cert and ingest.hep.tls.key) ingest.hep.tls.listen / SVC_INGEST_HEP_TLS_LISTEN",
    );
    expect(line("line protocol")).toBe(
      " line protocol 10.0.0.5:8086 ingest.line_protocol.listen / SVC_INGEST_LINE_PROTOCOL_LISTEN",
    );
    expect(text).toContain("   SVC_COORDINATOR_HTTP_SERVER_LISTEN=127.0.0.1:8080\n");
    // The names are the ones the loader reads.
    for (const r of listenRows(config)) expect(envName(r.key)).toMatch(/^SVC_[A-Z_]+$/);
    expect(
      loadConfig({ json: {}, env: { [envName("ingest.hep.tls.listen")]: "127.0.0.1:9999" } }).config.ingest.hep.tls
        .listen,
    ).toBe("127.0.0.1:9999");
  });

  test("the line protocol is off by default and says which key turns it on", () => {
    const { config } = loadConfig({ json: {}, env: {} });
    expect(firstRunBanner(admin, { listening: listenRows(config) })).toContain(
      "off (ingest.line_protocol.enable is false)",
    );
  });
});
