/**
 * The node port over TLS, mutual TLS optional (docs/ARCHITECTURE.md "Node authentication"), with
 * real appliances on loopback and certificates made by openssl in the test: a coordinator whose
 * coordinator.nodes entry has the node's CA finds the node's rows over https, and presents its
 * client certificate to a node with node.http_server.cacert; the same node without the CA, or
 * without the client certificate, is named failed in meta.nodes (never a 500); a plain HTTP client
 * gets nothing from the TLS port; the live stream fans in over wss with the same options; a cert
 * without its key, an unreadable file or a key of another certificate stops the start naming the key,
 * on the node port as on the line-protocol and OTLP listeners.
 */
import { describe, expect, test } from "bun:test";
import { clusterNodes } from "../../src/cluster/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startAppliance } from "../../src/main.ts";
import { startTestAppliance, testConfig, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { makePki, OPENSSL } from "../peers/tls.ts";
import { startWithApi } from "./export-helpers.ts";
import { connectStream } from "./stream-helpers.ts";

const SMALL = {
  coordinator: { enable: false },
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
};
const TOKEN = "mtls-node-token-0123456789abcdef";
const NOW_MS = Date.now();

interface NodeReport {
  name: string;
  status: string;
  rows: number;
  error?: string;
}

type Pki = ReturnType<typeof makePki>;
type Tls = { ca: string; cert?: string; key?: string };

/** `n` calls into `node` over HEP-over-HTTPS, with the client TLS options the node needs. */
async function sendCalls(a: TestAppliance, node: string, n: number, tls: Tls, token?: string) {
  const packets: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const callId = `${node}-${i}@tls`;
    packets.push(
      encodeHep3({
        srcIp: "192.0.2.1",
        dstIp: "192.0.2.2",
        srcPort: 5060,
        dstPort: 5060,
        ipProtocol: 17,
        timestampUs: (NOW_MS - 60_000 * (i + 1)) * 1000,
        protoType: 1,
        payload: invite({ callId, from: "a", to: "b" }),
      }),
    );
  }
  const r = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
    method: "POST",
    body: Buffer.concat(packets),
    headers: token ? { authorization: `Bearer ${token}` } : {},
    tls: fileTls(tls),
  } as RequestInit);
  expect(r.status).toBe(202);
  await waitFor(`${node} stored its calls`, async () => (await a.app.lake!.summary()).rows >= n);
}

const fileTls = (t: Tls) => ({
  ca: Bun.file(t.ca),
  ...(t.cert && t.key ? { cert: Bun.file(t.cert), key: Bun.file(t.key) } : {}),
});
const localhost = (url: string) => url.replace("127.0.0.1", "localhost");

describe("node port over TLS", () => {
  peerTest(
    "https with ca, mutual TLS with a client certificate; a node without the CA or the certificate is failed, not a 500; wss fan-in",
    [OPENSSL],
    async () => {
      await using dir = tempDir("svc-node-tls-");
      const pki: Pki = makePki(dir.path);
      // One node over HTTPS, one over HTTPS requiring client certificates (and its token as well).
      await using tlsNode = await startTestAppliance(`${dir.path}/tls`, {
        ...SMALL,
        node: { http_server: { listen: "127.0.0.1:0", cert: pki.serverCrt, key: pki.serverKey } },
        ingest: { ...SMALL.ingest, hep_stream: { enable: true } },
      });
      await using mtlsNode = await startTestAppliance(`${dir.path}/mtls`, {
        ...SMALL,
        node: {
          http_server: {
            listen: "127.0.0.1:0",
            cert: pki.serverCrt,
            key: pki.serverKey,
            cacert: pki.caCrt,
            token: TOKEN,
          },
        },
        ingest: { ...SMALL.ingest, hep_stream: { enable: true } },
      });
      expect(tlsNode.app.nodeUrl).toStartWith("https://");
      expect(mtlsNode.app.nodeUrl).toStartWith("https://");
      const client = { ca: pki.caCrt, cert: pki.clientCrt, key: pki.clientKey };
      await sendCalls(tlsNode, "tls", 4, { ca: pki.caCrt });
      await sendCalls(mtlsNode, "mtls", 3, client);

      // A plain HTTP client, and an HTTPS client without a certificate at the mTLS port: nothing.
      const plain = await fetch(`${tlsNode.app.nodeUrl!.replace("https:", "http:")}/api/v1/metadata/stats`).then(
        (r) => r.status,
        (e: unknown) => `refused: ${String(e)}`,
      );
      expect(String(plain)).toStartWith("refused");
      const noCert = await fetch(`${mtlsNode.app.nodeUrl}/api/v1/metadata/stats`, {
        tls: fileTls({ ca: pki.caCrt }),
      } as RequestInit).then(
        (r) => r.status,
        (e: unknown) => `refused: ${String(e)}`,
      );
      expect(String(noCert)).toStartWith("refused");
      // The node token still applies over mutual TLS.
      const noToken = await fetch(`${mtlsNode.app.nodeUrl}/api/v1/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ param: { limit: 1 } }),
        tls: fileTls(client),
      } as RequestInit);
      expect(noToken.status).toBe(401);

      // The same node twice (by 127.0.0.1 and by localhost, both in its certificate): with and without what it needs.
      await using coord = await startWithApi(`${dir.path}/coord`, {
        storage: { lakehouse: { enable: false } },
        ingest: { hep: { enable: false } },
        coordinator: {
          hep_stream: { enable: true, fan_out_timeout_ms: 2000 },
          nodes: [
            { name: "tls", url: tlsNode.app.nodeUrl!, ca: pki.caCrt },
            { name: "tls-no-ca", url: localhost(tlsNode.app.nodeUrl!) },
            { name: "mtls", url: mtlsNode.app.nodeUrl!, token: TOKEN, ...client },
            { name: "mtls-no-cert", url: localhost(mtlsNode.app.nodeUrl!), token: TOKEN, ca: pki.caCrt },
          ],
        },
      });
      const r = await coord.api.call("POST", "/transactions/search", {
        filter: { proto_type: 1, event_type: "call" },
        param: { limit: 100 },
        timestamp: { from: NOW_MS - 3_600_000, to: NOW_MS + 60_000 },
      });
      expect(r.status).toBe(200);
      const sids = (r.json?.data?.items ?? []).map((i) => String(i.sid)).sort();
      expect(sids).toEqual(
        [...["mtls-0", "mtls-1", "mtls-2"], ...["tls-0", "tls-1", "tls-2", "tls-3"]].map((s) => `${s}@tls`),
      );
      const meta = (r.json as unknown as { meta: { nodes: NodeReport[]; partial: boolean } }).meta;
      const nodes = Object.fromEntries(meta.nodes.map((n) => [n.name, n]));
      expect(nodes.tls).toMatchObject({ status: "ok", rows: 4 });
      expect(nodes.mtls).toMatchObject({ status: "ok", rows: 3 });
      expect(meta.partial).toBe(true);
      // The node's certificate is not verified without its CA; the mTLS node ends the handshake without a client certificate.
      expect(nodes["tls-no-ca"]).toMatchObject({ status: "failed" });
      expect(nodes["tls-no-ca"]!.error).toMatch(/certificate.*set coordinator\.nodes\[\]\.ca/);
      expect(nodes["mtls-no-cert"]).toMatchObject({ status: "failed" });
      expect(nodes["mtls-no-cert"]!.error).toMatch(
        /^\/api\/v1\/metadata\/check: .*handshake.*needs a client certificate: coordinator\.nodes\[\]\.cert and key/,
      );

      // The live stream fans in over wss, verified with the entry's ca, with the client certificate for the mTLS node.
      const ws = `${coord.a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?proto=1&access_token=${coord.api.token}`;
      using sub = connectStream(ws);
      await sub.opened;
      const linked = (url: string) =>
        coord.a.app.metrics.render().includes(`svc_stream_node_connections{node="${url}"} 1`);
      await waitFor("both nodes' links are open", () => linked(tlsNode.app.nodeUrl!) && linked(mtlsNode.app.nodeUrl!));
      await sendCalls(tlsNode, "live", 1, { ca: pki.caCrt });
      await sendCalls(mtlsNode, "live-m", 1, client);
      await waitFor("both nodes' events at the coordinator", () =>
        ["live-0@tls", "live-m-0@tls"].every((c) => sub.frames.some((f) => f.sip?.callid === c)),
      );
      // Without the CA, or without the client certificate, the link is refused and tried again.
      const retried = (url: string) =>
        coord.a.app.metrics.render().includes(`svc_stream_node_reconnects_total{node="${url}"}`);
      await waitFor(
        "the links without CA or certificate were refused",
        () => retried(localhost(tlsNode.app.nodeUrl!)) && retried(localhost(mtlsNode.app.nodeUrl!)),
      );
    },
    120_000,
  );

  test("config: cert without key, an unreadable file, a key of another certificate, TLS keys on an http:// node", async () => {
    await using dir = tempDir("svc-node-tls-config-");
    const pki = OPENSSL.probe() ? makePki(dir.path) : undefined;
    const start = (http: Record<string, unknown>) =>
      startAppliance(testConfig(dir.path, { ...SMALL, node: { http_server: http } }), createLogger({ test: true }));
    const refusal = async (http: Record<string, unknown>) =>
      await start(http).then(
        async (app) => {
          await app.stop();
          return "started";
        },
        (e: unknown) => `${(e as { code?: string }).code}: ${(e as Error).message}`,
      );
    expect(await refusal({ cert: `${dir.path}/x.crt` })).toMatch(
      /^CONFIG_INVALID: node\.http_server\.cert and node\.http_server\.key: set both/,
    );
    expect(await refusal({ cacert: `${dir.path}/ca.crt` })).toMatch(
      /^CONFIG_INVALID: node\.http_server\.cacert: client certificates need/,
    );
    expect(await refusal({ cert: `${dir.path}/missing.crt`, key: `${dir.path}/missing.key` })).toMatch(
      /^CONFIG_INVALID: node\.http_server\.cert: cannot read .*missing\.crt/,
    );
    const nodes = (entry: Record<string, unknown>) => () =>
      clusterNodes(testConfig(dir.path, { coordinator: { nodes: [entry] } }).coordinator, createLogger({ test: true }));
    expect(nodes({ url: "http://127.0.0.1:9001", ca: `${dir.path}/ca.crt` })).toThrow(
      /coordinator\.nodes\[0\]\.ca: the node's url is http:/,
    );
    expect(nodes({ url: "https://127.0.0.1:9001", cert: `${dir.path}/c.crt` })).toThrow(
      /coordinator\.nodes\[0\]\.cert and coordinator\.nodes\[0\]\.key: set both/,
    );
    expect(nodes({ url: "https://127.0.0.1:9001", ca: `${dir.path}/gone.crt` })).toThrow(
      /coordinator\.nodes\[0\]\.ca: cannot read/,
    );
    if (!pki) return;
    expect(await refusal({ cert: pki.serverCrt, key: pki.clientKey })).toMatch(
      /^CONFIG_INVALID: node\.http_server\.key: .* is not the key of the certificate node\.http_server\.cert/,
    );
    expect(await refusal({ cert: pki.serverCrt, key: pki.serverKey, cacert: pki.serverKey })).toMatch(
      /^CONFIG_INVALID: node\.http_server\.cacert: .* holds no certificate/,
    );
    expect(nodes({ url: "https://127.0.0.1:9001", ca: pki.caCrt, cert: pki.clientCrt, key: pki.rogueKey })).toThrow(
      /coordinator\.nodes\[0\]\.key: .* is not the key of the certificate/,
    );
    // The ingest listeners' cert, key and cacert are checked the same way (src/core/tls-files.ts).
    const ingestRefusal = async (ingest: Record<string, unknown>) =>
      await startAppliance(
        testConfig(dir.path, { ...SMALL, ingest: { ...SMALL.ingest, ...ingest } }),
        createLogger({ test: true }),
      ).then(
        async (app) => {
          await app.stop();
          return "started";
        },
        (e: unknown) => `${(e as { code?: string }).code}: ${(e as Error).message}`,
      );
    expect(
      await ingestRefusal({ line_protocol: { enable: true, cert: `${dir.path}/gone.crt`, key: pki.serverKey } }),
    ).toMatch(/^CONFIG_INVALID: ingest\.line_protocol\.cert: cannot read .*gone\.crt/);
    expect(await ingestRefusal({ otlp: { enable: true, cert: pki.serverCrt, key: pki.rogueKey } })).toMatch(
      /^CONFIG_INVALID: ingest\.otlp\.key: .* is not the key of the certificate ingest\.otlp\.cert/,
    );
    const ok = clusterNodes(
      testConfig(dir.path, {
        coordinator: {
          nodes: [{ url: "https://127.0.0.1:9001", ca: pki.caCrt, cert: pki.clientCrt, key: pki.clientKey }],
        },
      }).coordinator,
      createLogger({ test: true }),
    );
    expect(ok[0]).toMatchObject({
      url: "https://127.0.0.1:9001",
      ca: expect.stringContaining("BEGIN CERTIFICATE"),
      cert: expect.stringContaining("BEGIN CERTIFICATE"),
      key: expect.stringContaining("PRIVATE KEY"),
    });
  });
});
