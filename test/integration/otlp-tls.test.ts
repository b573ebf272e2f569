/**
 * OTLP over TLS with client certificates (docs/OTLP.md "Enabling": `cert`, `key`, `cacert` for
 * both transports): a client with a certificate of the CA exports over HTTPS and over gRPC with
 * TLS (the official gRPC exporter); no certificate or a foreign one is refused.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir } from "../harness.ts";
import { makePki, OPENSSL } from "../peers/tls.ts";

peerTest(
  "OTLP/HTTPS and OTLP/gRPC over TLS with client certificates",
  [OPENSSL],
  async () => {
    await using dir = tempDir();
    const pki = makePki(dir.path);
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true, cert: pki.serverCrt, key: pki.serverKey, cacert: pki.caCrt } },
    });
    const otlp = a.app.otlp!;
    expect(otlp.httpUrl()).toStartWith("https://");
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "tls-http" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  name: "over-https",
                  startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
                },
              ],
            },
          ],
        },
      ],
    });
    const post = (client?: { cert: string; key: string }) =>
      fetch(`${otlp.httpUrl()}/v1/traces`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
        tls: { ca: Bun.file(pki.caCrt), ...(client ? { cert: Bun.file(client.cert), key: Bun.file(client.key) } : {}) },
      } as RequestInit).then(
        (r) => r.status,
        (e: unknown) => `refused: ${String(e)}`,
      );
    expect(await post({ cert: pki.clientCrt, key: pki.clientKey })).toBe(200);
    expect(String(await post())).toStartWith("refused");
    expect(String(await post({ cert: pki.rogueCrt, key: pki.rogueKey }))).toStartWith("refused");

    const exportWith = async (creds: grpc.ChannelCredentials, name: string) => {
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({ "service.name": "tls-grpc" }),
        spanProcessors: [
          new SimpleSpanProcessor(
            new OTLPTraceExporter({
              url: `https://localhost:${otlp.grpcAddress()!.split(":").pop()}`,
              credentials: creds,
              timeoutMillis: 5000,
            }),
          ),
        ],
      });
      provider.getTracer("tls").startSpan(name).end();
      await provider.forceFlush().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    };
    // By name: the gRPC client sets the TLS server name from the host, and Bun refuses an IP there.
    const ca = readFileSync(pki.caCrt);
    await exportWith(
      grpc.credentials.createSsl(ca, readFileSync(pki.clientKey), readFileSync(pki.clientCrt)),
      "over-grpc-tls",
    );
    await exportWith(grpc.credentials.createSsl(ca), "without-client-cert");
    await a.app.lake!.sync();
    const rows = await a.app.lake!.query("SELECT service_name, name FROM svc_lake.main.otlp_traces ORDER BY name");
    expect(rows.rows).toEqual([
      { service_name: "tls-grpc", name: "over-grpc-tls" },
      { service_name: "tls-http", name: "over-https" },
    ]);
  },
  60_000,
);
