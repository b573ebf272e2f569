/**
 * Digest authentication (RFC 3261 §22.2, RFC 2617 MD5 qop=auth) of the loadgen client against
 * Kamailio's auth module with a fixed password: INVITE through the proxy to a loadgen UAS, and
 * REGISTER; a wrong password fails every call with the 401 (docs/LOADGEN.md "Digest").
 */
import { describe, expect } from "bun:test";
import { Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startKamailio } from "../peers/kamailio.ts";
import { freeUdpPort } from "../peers/process.ts";

const PASSWORD = "s3cret-digest";

describe("loadgen digest against Kamailio", () => {
  peerTest(
    "INVITE and REGISTER authenticate; a wrong password fails with 401",
    [PEERS.kamailio],
    async () => {
      await using dir = tempDir("svc-loadgen-kam-");
      const uas = await startUas();
      try {
        const sipPort = await freeUdpPort();
        await using _k = await startKamailio(dir.path, "auth.cfg", {
          SIP_PORT: sipPort,
          PASSWORD,
          UAS_PORT: uas.binds[0]!.port,
        });
        const run = async (o: Partial<LoadgenOptions>) => {
          const e = new Engine({
            opts: opts({
              remote_addr: `127.0.0.1:${sipPort}`,
              rate: 50,
              total_calls: 20,
              auth_username: "alice",
              ...o,
            }),
            mode: "load",
          });
          await e.start();
          await e.done;
          return e.snapshot();
        };
        const calls = await run({ scenario_name: "uac", auth_password: PASSWORD });
        expect(calls.failed_reasons).toEqual({});
        expect(calls.calls_successful).toBe(20);
        expect(calls.auth_challenges).toBe(20);
        expect(uas.snapshot().calls_successful).toBe(20);

        const reg = await run({ scenario_name: "register", auth_password: PASSWORD });
        expect(reg.calls_successful).toBe(20);
        expect(reg.auth_challenges).toBe(20);

        const wrong = await run({ scenario_name: "register", auth_password: "not-the-password", total_calls: 5 });
        expect(wrong.calls_successful).toBe(0);
        expect(wrong.failed_reasons).toEqual({ "status 401": 5 });
      } finally {
        await uas.stop();
      }
    },
    60_000,
  );
});
