/**
 * loadgen transports other than u1 (docs/LOADGEN.md "Transports"): TCP one socket (t1) and one
 * per call (tn) against sipp both ways, TLS (l1, ln) between two loadgen engines with a self-signed
 * certificate (Debian's sipp has no TLS), and UDP with one socket per call (un).
 */
import { describe, expect, test } from "bun:test";
import { Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { freePort, spawnPeer } from "../peers/process.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";

const CALLS = 50;

const tcpBound = (port: number) =>
  Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
    (s) => (s.end(), true),
    () => false,
  );

async function runClient(o: Partial<LoadgenOptions>) {
  const e = new Engine({ opts: opts({ scenario_name: "uac", rate: 100, total_calls: CALLS, ...o }), mode: "load" });
  await e.start();
  await e.done;
  return e.snapshot();
}

describe("loadgen transports", () => {
  for (const t of ["t1", "tn"]) {
    peerTest(
      `${t}: loadgen UAC → sipp UAS and sipp UAC → loadgen UAS over TCP (the UAS side listens, the client uses ${t})`,
      [PEERS.sipp],
      async () => {
        await using dir = tempDir("svc-loadgen-tcp-");
        const port = freePort();
        await using sippUas = spawnPeer(
          "sipp-uas",
          ["sipp", "-sn", "uas", "-t", "t1", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
          { dir: dir.path },
        );
        await waitFor("sipp on tcp", () => tcpBound(port));
        const s = await runClient({ transport: t, remote_addr: `127.0.0.1:${port}` });
        expect(s.failed_reasons).toEqual({});
        expect(s.calls_successful).toBe(CALLS);
        expect(s.retransmissions).toBe(0);
        expect(await sippUas.exited(20_000)).toBe(0);

        const uas = new Engine({
          opts: opts({ scenario_name: "uas", transport: "t1", local_port: 0, total_calls: CALLS }),
          mode: "management",
        });
        await uas.start();
        const b = uas.binds[0]!;
        expect(b.transport).toBe("tcp");
        await using sippUac = spawnPeer(
          "sipp-uac",
          [
            "sipp",
            "-sn",
            "uac",
            "-t",
            t,
            "-max_socket",
            "200",
            "-i",
            "127.0.0.1",
            `127.0.0.1:${b.port}`,
            "-r",
            "100",
            "-m",
            String(CALLS),
            "-nostdin",
          ],
          {
            dir: dir.path,
          },
        );
        const code = await sippUac.exited(30_000);
        await uas.done;
        expect(uas.snapshot().calls_successful).toBe(CALLS);
        expect(code).toBe(0);
      },
      60_000,
    );
  }

  for (const t of ["l1", "ln"]) {
    peerTest(
      `${t}: TLS between two loadgen engines`,
      [OPENSSL],
      async () => {
        await using dir = tempDir("svc-loadgen-tls-");
        const { cert, key } = selfSignedCert(dir.path, "127.0.0.1");
        const uas = new Engine({
          opts: opts({
            scenario_name: "uas",
            listeners: [{ transport: "l1", local_port: 0, tls_cert: cert, tls_key: key }],
          }),
          mode: "management",
        });
        await uas.start();
        try {
          const s = await runClient({ transport: t, remote_addr: `127.0.0.1:${uas.binds[0]!.port}` });
          expect(s.failed_reasons).toEqual({});
          expect(s.calls_successful).toBe(CALLS);
          const u = uas.snapshot();
          expect([u.calls_successful, u.transport_errors]).toEqual([CALLS, 0]);
        } finally {
          await uas.stop();
        }
      },
      60_000,
    );
  }

  test("un: one UDP socket per call", async () => {
    const uas = await startUas();
    const sources = new Set<number>();
    const leg = uas.legs[0]!;
    const send = leg.send;
    (leg as { send: typeof send }).send = (text, host, port) => {
      sources.add(port);
      send(text, host, port);
    };
    try {
      const s = await runClient({ transport: "un", remote_addr: `127.0.0.1:${uas.binds[0]!.port}`, total_calls: 10 });
      expect(s.calls_successful).toBe(10);
      expect(sources.size).toBe(10);
    } finally {
      await uas.stop();
    }
  });
});
