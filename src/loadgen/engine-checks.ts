/**
 * The checks an engine makes on its options before it opens a socket (docs/LOADGEN.md "Engine",
 * "Media and RTCP reports", "OTLP logs"); `loadgen profile check` runs them too, through the
 * engine's constructor. Each failure is a usage error (exit 2, one line naming the flag or key).
 */
import { basename } from "node:path";
import { loadScenario, type Scenario } from "./scenario-xml.ts";
import { LoadgenUsageError, splitHostPort, type LoadgenOptions } from "./options.ts";
import { checkOtelProto } from "./profile-keys.ts";
import { transportMode, type TransportMode } from "./transport.ts";
import { checkPerIpOptions } from "./transport-ui.ts";
import { CLIENT_SCENARIOS } from "./engine-scenario.ts";

/** Report switches that only act through HEP: set without hep_addr they would be silently ignored. */
const NEEDS_HEP_ADDR = ["hep_raw_rtcp", "hep_homer_lake_rtcp", "send_media_report"] as const;

export interface BindCheck {
  mode: TransportMode;
  ip: string;
  port: number;
  tls_cert: string;
  tls_key: string;
}

/** Listeners (management/UAS) or a client's own bind, each with its transport mode; omitted listener keys inherit the engine's. */
export function bindSpecsOf(o: LoadgenOptions, client: boolean): BindCheck[] {
  const list = o.listeners.length > 0 && !client ? o.listeners : [{}];
  return list.map((l: Partial<LoadgenOptions["listeners"][number]>) => ({
    mode: transportMode(l.transport ?? o.transport),
    ip: l.local_ip ?? o.local_ip,
    port: l.local_port ?? o.local_port ?? 0,
    tls_cert: l.tls_cert ?? o.tls_cert,
    tls_key: l.tls_key ?? o.tls_key,
  }));
}

export function checkEngineOptions(
  o: LoadgenOptions,
  scenario: string,
  client: boolean,
  binds: readonly BindCheck[],
): void {
  checkPerIpOptions(
    o,
    client,
    binds.map((b) => b.mode),
  );
  checkOtelProto("-log_otel_proto", o.log_otel_proto);
  if (o.log_otel_endpoint && o.log_otel_proto !== "grpc" && !/^https?:\/\//.test(o.log_otel_endpoint))
    throw new LoadgenUsageError(
      `log_otel_endpoint must be the full http(s) URL of the collector's logs route, got "${o.log_otel_endpoint}"`,
    );
  if (o.log_otel_endpoint && o.log_otel_proto === "grpc")
    splitHostPort(o.log_otel_endpoint, 4317, "log_otel_endpoint (host:port for grpc)");
  for (const key of NEEDS_HEP_ADDR)
    if (o[key] && !o.hep_addr)
      throw new LoadgenUsageError(`${key} needs hep_addr (the reports are sent as HEP; set -hep_addr host:port)`);
  for (const l of binds) {
    if (l.mode.kind === "tls" && !client && !(l.tls_cert && l.tls_key))
      throw new LoadgenUsageError(`a TLS listener (${l.ip}:${l.port}) needs tls_cert and tls_key`);
  }
  if (client && !o.remote_addr)
    throw new LoadgenUsageError(
      `scenario ${scenario} needs the remote address (-rsa host:port or a positional host:port)`,
    );
}

/** The engine's scenario: an `-sf` file (client when it starts with a send) or a built-in one (`-sn`, by default uas in management mode, else uac). */
export function engineScenario(
  o: LoadgenOptions,
  mode: "load" | "management",
): { xml: Scenario | undefined; scenario: string; client: boolean } {
  if (o.scenario_file) {
    const xml = loadScenario(o.scenario_file);
    return { xml, scenario: basename(o.scenario_file).replace(/\.xml$/i, ""), client: xml.client };
  }
  let scenario = (o.scenario_name || (mode === "management" ? "uas" : "uac")).toLowerCase();
  if (scenario === "management") scenario = "uas";
  if (scenario !== "uas" && !CLIENT_SCENARIOS.has(scenario))
    throw new LoadgenUsageError(`unknown scenario "${o.scenario_name}" (built in: uac, uas, register, options)`);
  return { xml: undefined, scenario, client: scenario !== "uas" };
}
