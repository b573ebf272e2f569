/**
 * `svc search --interactive` driven through tmux like a person at a terminal (docs/CLI.md
 * "Interactive keys"): flags pre-fill the form, Shift+Tab / Tab move between fields, typing
 * fills them, Enter searches, Enter on a table row opens its call flow, `f` cycles the formats,
 * `r` re-runs (new rows appear), Esc goes back
 * and Esc again quits with the terminal restored. Every step waits for the screen, never a delay.
 */
import { describe, expect } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { ROOT, cliEnv } from "./cli-harness.ts";

const PASSWORD = "cli-tui-password";

describe("svc search --interactive in tmux", () => {
  peerTest(
    "a complete search: form, results in every format, re-run, back, quit",
    [PEERS.tmux],
    async () => {
      await using dir = tempDir("svc-cli-tui-");
      await using a = await startTestAppliance(dir.path, {
        coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      });
      const host = a.app.coordinatorUrl!.replace("http://", "");
      const callId = `tui-${crypto.randomUUID().slice(0, 8)}@pbx`;
      const call: CallParams = { callId, from: "1001", to: "2002", fromTag: "ft", toTag: "tt" };
      const t0 = (Date.now() - 60_000) * 1000;
      const udp = await Bun.udpSocket({});
      const send = (payload: string, i: number, dir2: "ab" | "ba") =>
        udp.send(
          encodeHep3({
            srcIp: dir2 === "ab" ? "10.3.0.1" : "10.3.0.2",
            dstIp: dir2 === "ab" ? "10.3.0.2" : "10.3.0.1",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: t0 + i * 10_000,
            protoType: 1,
            captureId: 3,
            nodeName: "tui",
            payload,
          }),
          a.app.ingest!.listeners.udp!.port(),
          "127.0.0.1",
        );
      send(invite({ ...call, srcIp: "10.3.0.1" }), 0, "ab");
      send(response(180, "Ringing", "INVITE", call), 1, "ba");
      send(response(200, "OK", "INVITE", call), 2, "ba");
      await waitFor("3 rows stored", async () => {
        await a.app.lake!.sync();
        const r = await a.app.lake!.query(
          `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = '${callId}'`,
        );
        return Number(r.rows[0]!.n) === 3;
      });

      const sock = join(dir.path, "tmux.sock");
      const env = cliEnv(dir.path);
      delete env.TMUX;
      const tmux = (...args: string[]) => {
        const r = Bun.spawnSync(["tmux", "-S", sock, ...args], { env, stdout: "pipe", stderr: "pipe" });
        if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
        return r.stdout.toString();
      };
      const screen = () => tmux("capture-pane", "-p", "-t", "svc");
      const see = (what: string, test: (s: string) => boolean) =>
        waitFor(`screen shows ${what}`, () => test(screen()), 15_000, 50).catch((e: Error) => {
          throw new Error(`${e.message}\n--- screen ---\n${screen()}`);
        });
      const keys = (...k: string[]) => tmux("send-keys", "-t", "svc", ...k);
      const type = (text: string) => tmux("send-keys", "-t", "svc", "-l", text);

      const cmd = `cd ${ROOT} && ${process.execPath} src/main.ts search --interactive --host ${host} --user admin --from 10m; echo "EXIT=$?"; exec cat`;
      tmux("new-session", "-d", "-s", "svc", "-x", "160", "-y", "48", cmd);
      try {
        // Flags pre-fill the form; focus starts on Call-ID.
        await see("the form", (s) => s.includes("svc search · interactive") && s.includes("› Call-ID"));
        let s = screen();
        expect(s).toContain(`  Host        ${host}`);
        expect(s).toContain("  User        admin");
        expect(s).toContain("  From        10m");
        // Shift+Tab up to Password (6 fields up), type it (shown as dots), Tab back down.
        keys("BTab", "BTab", "BTab", "BTab", "BTab", "BTab");
        await see("focus on Password", (x) => x.includes("› Password"));
        type(PASSWORD);
        await see("the password as dots", (x) => x.includes(`› Password    ${"•".repeat(PASSWORD.length)}`));
        keys("Tab", "Tab", "Tab", "Tab", "Tab", "Tab");
        await see("focus back on Call-ID", (x) => x.includes("› Call-ID"));
        type(callId);
        await see("the Call-ID typed", (x) => x.includes(`› Call-ID     ${callId}`));
        keys("Enter");

        await see("the results table", (x) => x.includes("svc search · 3 rows · table"));
        s = screen();
        const rows = s.split("\n").filter((l) => l.includes(callId));
        expect(rows.map((l) => l.split(/\s+/)[1])).toEqual(["200", "180", "INVITE"]);
        expect(existsSync(join(dir.path, ".svc_token"))).toBe(true);

        // ↓ selects the 180 row (reverse video), Enter opens that row's call as a ladder, Esc goes back.
        keys("Down");
        await see("the 180 row selected", () =>
          tmux("capture-pane", "-p", "-e", "-t", "svc")
            .split("\n")
            .some((l) => l.includes("\x1b[7m") && / 180 /.test(l)),
        );
        keys("Enter");
        await see(
          "the call flow of the row",
          (x) => x.includes(`svc search · call ${callId}`) && x.includes("3 messages, 2 endpoints"),
        );
        expect(screen()).toMatch(/│─+ INVITE \(SDP\) ─+>│/);
        keys("Escape");
        await see("the table again", (x) => x.includes("svc search · 3 rows · table") && x.includes("Enter call flow"));

        // f cycles: vertical, csv, json, chart, callflow.
        keys("f");
        await see("vertical", (x) => x.includes("· 3 rows · vertical") && x.includes("1. row"));
        keys("f");
        await see(
          "csv",
          (x) => x.includes("· 3 rows · csv") && /^timestamp,event,caller,callee,session_id,src,dst$/m.test(x),
        );
        keys("f");
        await see("json", (x) => x.includes("· 3 rows · json") && x.includes(`"session_id": "${callId}"`));
        keys("f");
        await see("chart", (x) => x.includes("· 3 rows · chart") && x.includes("Events over time"));
        keys("f");
        await see("callflow", (x) => x.includes("· 3 rows · callflow") && x.includes(`Call-IDs: ${callId}`));
        s = screen();
        expect(s).toMatch(/│─+ INVITE \(SDP\) ─+>│/);
        expect(s).toMatch(/│<─+ 180 Ringing ─+│/);
        expect(s).toContain("3 messages, 2 endpoints");

        // r re-runs: the ACK sent meanwhile shows up.
        send(request("ACK", { ...call, cseq: 1 }), 3, "ab");
        await waitFor("the ACK stored", async () => {
          await a.app.lake!.sync();
          const r = await a.app.lake!.query(
            `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = '${callId}'`,
          );
          return Number(r.rows[0]!.n) === 4;
        });
        keys("r");
        await see(
          "4 rows after r",
          (x) => x.includes("svc search · 4 rows · callflow") && x.includes("4 messages, 2 endpoints"),
        );
        expect(screen()).toMatch(/│─+ ACK ─+>│/);

        // Esc: back to the form with the values kept; Esc again quits and restores the screen.
        keys("Escape");
        await see(
          "the form again",
          (x) =>
            x.includes("svc search · interactive") && x.includes(`Call-ID     ${callId}`) && x.includes("◀ callflow ▶"),
        );
        keys("Escape");
        await see("the exit code", (x) => x.includes("EXIT=0"));
        expect(screen()).not.toContain("svc search ·");
      } finally {
        udp.close();
        try {
          tmux("kill-server");
        } catch {
          // already gone
        }
      }
    },
    60_000,
  );
});
