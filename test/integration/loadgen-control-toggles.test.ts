/**
 * Primary-engine controls of the loadgen control API (docs/LOADGEN.md "Control API"): transport
 * and listener toggles close and reopen a management engine's listeners on real sockets (a closed
 * UDP port can be bound by someone else, a closed TCP port refuses connections, both answer SIP again
 * once reopened); scenario switches change what a client engine's next calls are; rate and pause
 * still reach every engine.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  Engine,
  planFromArgv,
  runLoadgen,
  startControlApi,
  startPlan,
  type LoadgenOptions,
} from "../../src/loadgen/index.ts";
import { tempDir, waitFor } from "../harness.ts";
import { opts, startUas } from "./loadgen-harness.ts";

const post = async (base: string, body: unknown) => {
  const r = await fetch(`${base}/api/v1/control`, {
    method: "POST",
    headers: { authorization: "Bearer tok-1", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & { message?: string } };
};

/** OPTIONS pings to 127.0.0.1:port over `transport`; the finished client's statistics. */
async function ping(port: number, transport: "u1" | "t1", more: Partial<LoadgenOptions> = {}) {
  const e = new Engine({
    opts: opts({
      scenario_name: "options",
      transport,
      remote_addr: `127.0.0.1:${port}`,
      rate: 100,
      total_calls: 2,
      ...more,
    }),
    mode: "load",
  });
  await e.start();
  await e.done;
  return e.snapshot();
}

describe("loadgen control API: primary-engine controls", () => {
  test("transports and listeners toggle the primary engine's listeners off (an outage) and on again", async () => {
    await using dir = tempDir("svc-loadgen-toggle-");
    const file = join(dir.path, "server.json");
    writeFileSync(
      file,
      JSON.stringify({
        api_addr: "127.0.0.1:0",
        api_token: "tok-1",
        server: {
          id: "srv",
          listeners: [
            { transport: "u1", local_ip: "127.0.0.1", local_port: 0 },
            { transport: "t1", local_ip: "127.0.0.1", local_port: 0 },
          ],
        },
        clients: [{ id: "load", scenario_name: "uac", remote_addr: "127.0.0.1:9", rate: 0 }],
      }),
    );
    const plan = planFromArgv(["server", "-config", file]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const running = await startPlan(plan, { out: () => {}, err: () => {} });
    try {
      const base = `http://127.0.0.1:${running.api!.port}`;
      const listed = (await (
        await fetch(`${base}/api/v1/listeners`, { headers: { authorization: "Bearer tok-1" } })
      ).json()) as {
        id: string;
        listeners: Array<{ transport: string; port: number; enabled: boolean }>;
      };
      expect(listed.id).toBe("srv");
      expect(listed.listeners.map((l) => [l.transport, l.enabled])).toEqual([
        ["udp", true],
        ["tcp", true],
      ]);
      const [udpPort, tcpPort] = listed.listeners.map((l) => l.port) as [number, number];
      expect((await ping(udpPort, "u1")).calls_successful).toBe(2);
      expect((await ping(tcpPort, "t1")).calls_successful).toBe(2);

      // UDP off: the port is free (the test can bind it), nothing listens there.
      const off = await post(base, { transports: { udp: false } });
      expect(off.status).toBe(200);
      expect(off.body.applied).toEqual({ transports: ["srv"] });
      expect((off.body.primary as { listeners: unknown }).listeners).toEqual([
        { index: 0, transport: "udp", ip: "127.0.0.1", port: udpPort, enabled: false },
        { index: 1, transport: "tcp", ip: "127.0.0.1", port: tcpPort, enabled: true },
      ]);
      // An OPTIONS sent there gets no answer (the client gives up after its -timeout of 1 s).
      const silent = await ping(udpPort, "u1", { total_calls: 1, timeout_s: 1 });
      expect([silent.calls_created, silent.calls_successful, silent.messages_received]).toEqual([1, 0, 0]);
      // The kernel's ICMP port unreachable reaches the client as a counted transport error, not a crash.
      expect(silent.transport_errors).toBeGreaterThan(0);
      const squatter = await Bun.udpSocket({ hostname: "127.0.0.1", port: udpPort });
      // While someone else holds the port, reopening is a 409 that says why.
      const blocked = await post(base, { listeners: [{ index: 0, enabled: true }] });
      expect(blocked.status).toBe(409);
      expect(blocked.body.message).toMatch(/cannot reopen listener 0: cannot listen on udp 127\.0\.0\.1:\d+/);
      squatter.close();
      expect((await post(base, { listeners: [{ index: 0, enabled: true }] })).status).toBe(200);
      expect((await ping(udpPort, "u1")).calls_successful).toBe(2);

      // TCP off: connections are refused; on again: answered on the same port.
      expect((await post(base, { listeners: [{ index: 1, enabled: false }] })).status).toBe(200);
      await expect(ping(tcpPort, "t1")).rejects.toThrow(/cannot connect tcp/);
      await post(base, { transports: { tcp: true } });
      expect((await ping(tcpPort, "t1")).calls_successful).toBe(2);

      // Rate and pause still reach both engines; the toggles the primary only.
      const both = await post(base, { rate: 3, pause: true, transports: { udp: true } });
      expect(both.body.applied).toEqual({ rate: ["srv", "load"], pause: ["srv", "load"], transports: ["srv"] });
      expect(running.engines.map((e) => [e.snapshot().rate, e.snapshot().paused])).toEqual([
        [3, true],
        [3, true],
      ]);

      for (const [body, status, message] of [
        [{ transports: { tls: false } }, 409, /has no tls listener \(it has udp, tcp\)/],
        [{ transports: { sctp: false } }, 400, /unknown transport "sctp"/],
        [{ transports: { udp: "off" } }, 400, /transports.udp must be true or false/],
        [{ listeners: [{ index: 5, enabled: false }] }, 404, /no listener 5: the primary engine \(srv\) has 2/],
        [{ listeners: [{ index: 0 }] }, 400, /each listener must be/],
        [{ listeners: { index: 0 } }, 400, /listeners must be an array/],
        [{ scenario: "bogus" }, 400, /scenario must be a built-in name .*got "bogus"/],
        [{ scenario: "uac" }, 409, /the primary engine is a server and answers as uas/],
      ] as const) {
        const r = await post(base, body);
        expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), status]);
        expect(r.body.message).toMatch(message);
      }
      // A refused change changes nothing: the listeners stay as they were.
      expect(running.engines[0]!.listeners.states().map((l) => l.enabled)).toEqual([true, true]);
    } finally {
      await running.stop();
    }
  });

  test("a client primary engine switches its built-in scenario for the calls it starts next", async () => {
    const uas = await startUas();
    const client = new Engine({
      opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${uas.binds[0]!.port}`, rate: 50 }),
      mode: "load",
    });
    await client.start();
    const api = startControlApi("127.0.0.1:0", "tok-1", [client]);
    const base = `http://127.0.0.1:${api.port}`;
    try {
      await waitFor("INVITE calls answered", () => uas.snapshot().calls_successful >= 3);
      const r = await post(base, { scenario: "options" });
      expect(r.status).toBe(200);
      expect(r.body.primary).toMatchObject({ id: "main", scenario: "options", listeners: [] });
      expect(client.snapshot().scenario).toBe("options");
      // From now on the UAS sees OPTIONS, no new INVITE.
      const answeredBefore = uas.snapshot().requests_answered;
      await waitFor("OPTIONS answered", () => uas.snapshot().requests_answered >= answeredBefore + 5);
      const invites = uas.snapshot().calls_created;
      await waitFor("more OPTIONS", () => uas.snapshot().requests_answered >= answeredBefore + 10);
      expect(uas.snapshot().calls_created).toBe(invites);

      const wrong = await post(base, { scenario: "uas" });
      expect(wrong.status).toBe(409);
      expect(wrong.body.message).toMatch(/is a client \(options\); it can switch to uac, register or options, not uas/);
      expect((await post(base, { transports: { udp: false } })).body.message).toMatch(
        /has no listeners: it is a client engine/,
      );
    } finally {
      api.stop();
      await client.stop();
      await uas.stop();
    }
  });

  test("loadgen shell: listeners, listener, transport and scenario commands", async () => {
    const plan = planFromArgv([
      "server",
      "-sn",
      "uas",
      "-i",
      "127.0.0.1",
      "-p",
      "0",
      "-api_addr",
      "127.0.0.1:0",
      "-api_token",
      "tok-1",
    ]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const running = await startPlan(plan, { out: () => {}, err: () => {} });
    try {
      const port = running.engines[0]!.binds[0]!.port;
      const out: string[] = [];
      const err: string[] = [];
      async function* lines() {
        yield* [
          "listeners",
          "transport udp off",
          "listeners",
          "listener 0 on",
          "scenario uas",
          "transport tcp off",
          "listener 0 maybe",
          "scenario uac",
        ];
      }
      const code = await runLoadgen(["shell", "-api_addr", `127.0.0.1:${running.api!.port}`, "-api_token", "tok-1"], {
        out: (l) => out.push(l),
        err: (l) => err.push(l),
        lines: lines(),
      });
      const listener = (enabled: boolean) => ({ index: 0, transport: "udp", ip: "127.0.0.1", port, enabled });
      expect(out).toEqual([
        `server 0 udp 127.0.0.1:${port} on`,
        JSON.stringify({
          rate: 10,
          paused: false,
          engines: 1,
          applied: { transports: ["server"] },
          primary: { id: "server", scenario: "uas", listeners: [listener(false)] },
        }),
        `server 0 udp 127.0.0.1:${port} off`,
        JSON.stringify({
          rate: 10,
          paused: false,
          engines: 1,
          applied: { listeners: ["server"] },
          primary: { id: "server", scenario: "uas", listeners: [listener(true)] },
        }),
        JSON.stringify({
          rate: 10,
          paused: false,
          engines: 1,
          applied: { scenario: ["server"] },
          primary: { id: "server", scenario: "uas", listeners: [listener(true)] },
        }),
      ]);
      expect(err).toEqual([
        "loadgen shell: control API 409: the primary engine (server) has no tcp listener (it has udp)",
        "loadgen shell: listener needs on or off as its last word",
        "loadgen shell: control API 409: the primary engine is a server and answers as uas; a client scenario (uac) needs its own engine with remote_addr",
      ]);
      expect(code).toBe(1);
    } finally {
      await running.stop();
    }
  });
});
