/**
 * What the browser tests of the dashboard's habits share (docs/UI.md, docs/DASHBOARD.md): an
 * appliance with the given calls ingested as HEP over UDP (INVITE, 200, ACK a few minutes ago), a
 * signed-in Chromium page of a chosen size, and a bearer token for the API.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

export const PASSWORD = "ui-habits-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** INVITE, 200 OK, ACK of one call at `t0Ms` between `a` and `b`. */
function call(callId: string, t0Ms: number, a: string, b: string): Uint8Array[] {
  const p = { callId, from: "1001", to: "2002", fromTag: "f-1" };
  const hep = (payload: string, atMs: number, src: string, dst: string) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: (t0Ms + atMs) * 1000,
      protoType: 1,
      captureId: 2001,
      nodeName: "edge-habits",
      payload,
    });
  return [
    hep(invite({ ...p, srcIp: a }), 0, a, b),
    hep(response(200, "OK", "INVITE", { ...p, toTag: "t-1" }), 300, b, a),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 320, a, b),
  ];
}

export interface Habits extends AsyncDisposable {
  appliance: TestAppliance;
  base: string;
  bearer: string;
  browser: Browser;
  page: Page;
  errors: string[];
}

/** `calls`: Call-ID → [caller IP, callee IP]; each call is 2 minutes old. */
export async function startHabits(
  dir: string,
  opts: {
    calls?: Record<string, [string, string]>;
    viewport?: { width: number; height: number };
    config?: Record<string, unknown>;
  } = {},
): Promise<Habits> {
  await buildUi();
  const coordinator = {
    ...((opts.config?.coordinator as Record<string, unknown> | undefined) ?? {}),
    auth: { admin_password_hash: sha256Hex(PASSWORD) },
  };
  const appliance = await startTestAppliance(dir, { ...opts.config, coordinator });
  const { ingest, lake, coordinatorUrl } = appliance.app;
  const calls = Object.entries(opts.calls ?? {});
  if (calls.length > 0) {
    const t0 = Date.now() - 2 * 60_000;
    const udp = await Bun.udpSocket({});
    for (const [id, [a, b]] of calls)
      for (const p of call(id, t0, a, b)) udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the calls in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call");
      return Number(r.rows[0]!.n) === calls.length * 3;
    });
  }
  const base = coordinatorUrl!;
  const login = await fetch(`${base}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const bearer = ((await login.json()) as { token: string }).token;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  const page = await (await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } })).newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${base}/`);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return {
    appliance,
    base,
    bearer,
    browser,
    page,
    errors,
    async [Symbol.asyncDispose]() {
      await browser.close();
      await appliance[Symbol.asyncDispose]();
    },
  };
}
