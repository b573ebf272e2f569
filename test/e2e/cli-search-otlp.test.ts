/**
 * `svc search --proto otlp_traces|otlp_metrics|otlp_logs` against an appliance that received OTLP
 * from the official exporters: the generic filter mapping of docs/OTLP.md "CLI" (--call-id,
 * --payload, --user-agent) reaches the OTLP tables and SIP-only flags are reported as ignored.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { sendAll } from "../integration/otlp-helpers.ts";
import { cliEnv, runCli } from "./cli-harness.ts";

const PASSWORD = "cli-otlp-password";

describe("svc search over the OTLP tables", () => {
  test("--proto otlp_traces/otlp_metrics/otlp_logs with --call-id, --payload, --user-agent", async () => {
    await using dir = tempDir("svc-cli-otlp-");
    await using home = tempDir("svc-cli-otlp-home-");
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true } },
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const sent = await sendAll("http-json", a.app.otlp!.httpUrl()!, a.app.otlp!.grpcAddress()!);
    await sendAll("grpc", a.app.otlp!.httpUrl()!, a.app.otlp!.grpcAddress()!); // another service, other trace
    await a.app.lake!.sync();
    const host = a.app.coordinatorUrl!.replace("http://", "");
    const search = async (args: string[]) => {
      const r = await runCli(
        ["search", "--host", host, "--user", "admin", "--from", "1h", "--format", "json", ...args],
        cliEnv(home.path, { SVC_PASSWORD: PASSWORD }),
      );
      expect(r.code).toBe(0);
      return { rows: JSON.parse(r.stdout) as Array<Record<string, unknown>>, stderr: r.stderr };
    };

    const byTrace = await search(["--proto", "otlp_traces", "--call-id", sent.traceId]);
    expect(byTrace.rows.map((r) => r.name).sort()).toEqual(["INVITE", "route lookup"]);
    expect(byTrace.rows.every((r) => r.trace_id === sent.traceId && r.service_name === sent.service)).toBe(true);

    const byService = await search([
      "--proto",
      "otlp-traces",
      "--user-agent",
      "http-json",
      "--payload",
      "route",
      "--from-user",
      "1001",
    ]);
    expect(byService.rows.map((r) => r.span_id)).toEqual([sent.childSpanId]);
    expect(byService.stderr).toContain("--from-user");

    const metrics = await search(["--proto", "otlp_metrics", "--call-id", "sip.", "--user-agent", sent.service]);
    expect(metrics.rows.map((r) => r.name).sort()).toEqual(["sip.calls", "sip.pdd"]);

    const logs = await search(["--proto", "otlp_logs", "--payload", "failed: 503", "--user-agent", sent.service]);
    expect(logs.rows.map((r) => [r.body, r.trace_id])).toEqual([[`call ${sent.callId} failed: 503`, sent.traceId]]);
  }, 120_000);
});
