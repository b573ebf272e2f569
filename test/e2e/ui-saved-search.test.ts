/**
 * Saved searches (docs/DASHBOARD.md "Saved searches") in a real browser (Debian's chromium via playwright-core, the appliance
 * in-process, calls ingested as HEP over UDP): a saved search survives a reload and a new login and
 * is not shown to another user; two calls selected in the grid open as one call view (a summary per
 * Call-ID, exports and links holding both); the column
 * chooser hides internal columns by default and its choice survives a reload. Only roles and
 * accessible names are used (docs/DASHBOARD.md describes what is checked).
 */
import { expect } from "bun:test";
import { chromium, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-saved-password-1";
const OTHER_PASSWORD = "olga-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const PROXY = "10.30.0.1";

/** A call from `from` at `ip` through the proxy: answered (7 messages) or busy (4 messages). */
function call(callId: string, from: string, to: string, ip: string, t0Us: number, busy: boolean): Uint8Array[] {
  const p = { callId, from, to, fromTag: `f-${from}`, toTag: `t-${to}` };
  const hep = (payload: string, atMs: number, src: string, dst: string) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: t0Us + atMs * 1000,
      protoType: 1,
      captureId: 2001,
      nodeName: "edge-ui",
      payload,
    });
  const head = [
    hep(invite({ ...p, srcIp: ip }), 0, ip, PROXY),
    hep(response(100, "Trying", "INVITE", p), 20, PROXY, ip),
  ];
  if (busy)
    return [
      ...head,
      hep(response(486, "Busy Here", "INVITE", p), 900, PROXY, ip),
      hep(request("ACK", { ...p, cseq: 1 }), 920, ip, PROXY),
    ];
  return [
    ...head,
    hep(response(180, "Ringing", "INVITE", p), 400, PROXY, ip),
    hep(response(200, "OK", "INVITE", p), 3_000, PROXY, ip),
    hep(request("ACK", { ...p, cseq: 1 }), 3_020, ip, PROXY),
    hep(request("BYE", { ...p, cseq: 2 }), 9_000, ip, PROXY),
    hep(response(200, "OK", "BYE", { ...p, cseq: 2 }), 9_030, PROXY, ip),
  ];
}

/** Column titles of the results grid (the sort mark left out; the selection column has none). */
const headers = async (page: Page) =>
  (await page.getByRole("table", { name: "Search results" }).getByRole("columnheader").allInnerTexts()).map((h) =>
    h.replace(/ [▲▼]$/, "").trim(),
  );
const resultRows = (page: Page) =>
  page.getByRole("table", { name: "Search results" }).getByRole("row", { name: /^Open call/ });
async function rowCount(page: Page, n: number): Promise<void> {
  await waitFor(`${n} result rows`, async () => (await resultRows(page).count()) === n);
}

peerTest(
  "saved search survives reload and login, private to its user; two calls open as one view; chosen columns persist",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-saved-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const base = coordinatorUrl!;
    const api = `${base}/api/v4`;

    const tag = crypto.randomUUID().slice(0, 8);
    const answered = `answered-${tag}@pbx`;
    const busy = `busy-${tag}@pbx`;
    const other = `other-${tag}@pbx`;
    const t0Us = (Date.now() - 180_000) * 1000;
    const udp = await Bun.udpSocket({});
    for (const pkt of [
      ...call(answered, "1001", "2002", "10.30.0.11", t0Us, false),
      ...call(busy, "1001", "3003", "10.30.0.12", t0Us + 30_000_000, true),
      ...call(other, "7007", "2002", "10.30.0.13", t0Us + 60_000_000, false),
    ]) {
      udp.send(pkt, ingest!.listeners.udp!.port(), "127.0.0.1");
    }
    udp.close();
    await waitFor("the three calls in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id IN ($1, $2, $3)`,
        [answered, busy, other],
      );
      return Number(r.rows[0]!.n) === 18;
    });
    const login = async (username: string, password: string) =>
      (
        (await (
          await fetch(`${api}/auth/sessions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ username, password }),
          })
        ).json()) as {
          token: string;
        }
      ).token;
    const admin = await login("admin", PASSWORD);
    const created = await fetch(`${api}/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ username: "olga", password: OTHER_PASSWORD }),
    });
    expect(created.status).toBe(201);
    const savedVia = async (token: string) => {
      const r = await fetch(`${api}/me/settings`, { headers: { authorization: `Bearer ${token}` } });
      const items = (
        (await r.json()) as {
          data: {
            items: Array<{
              category: string;
              param: string;
              data: { items: Array<{ name: string; filters: unknown; range: unknown }> };
            }>;
          };
        }
      ).data.items;
      return items.find((s) => s.category === "search" && s.param === "saved")?.data.items ?? [];
    };

    /** The `columns` of the Home dashboard's result table, as saved. */
    const homeColumns = async () => {
      const r = await fetch(`${api}/dashboards`, { headers: { authorization: `Bearer ${admin}` } });
      const home = (
        (await r.json()) as {
          data: { items: Array<{ name: string; layout: Array<{ type: string; config?: { columns?: string[] } }> }> };
        }
      ).data.items.find((d) => d.name === "Home");
      return home?.layout.find((w) => w.type === "result-table")?.config?.columns;
    };

    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (
        await browser.newContext({ viewport: { width: 1366, height: 900 }, acceptDownloads: true })
      ).newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      const signIn = async (username: string, password: string) => {
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        await page.getByLabel("Username").fill(username);
        await page.getByLabel("Password").fill(password);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      };
      await page.goto(`${base}/`);
      await signIn("admin", PASSWORD);
      const form = page.getByRole("form", { name: "Search call" });

      // 1. A search from user 1001 over the last 6 hours: the answered and the busy call.
      await form.getByLabel("From User").fill("1001");
      const rangeButton = (label: string) =>
        page.getByRole("button", { name: new RegExp(`^Dashboard time range: ${label}`) });
      const pickRange = async (label: string) => {
        await page.getByRole("button", { name: /^Dashboard time range:/ }).click();
        await page
          .getByRole("dialog", { name: "Dashboard time range" })
          .getByRole("button", { name: label, exact: true })
          .click();
        await rangeButton(label).waitFor();
      };
      await pickRange("Last 6 hours");
      await form.getByRole("button", { name: "Search" }).click();
      await rowCount(page, 11);

      // 2. Columns: what a HOMER user reads, no internal key; hide Proto, show User-Agent.
      expect(await headers(page)).toEqual([
        "",
        "Date",
        "Method",
        "From user",
        "To user",
        "R-URI",
        "Source",
        "Destination",
        "Call-ID",
        "Capture ID",
        "Node",
        "Proto",
      ]);
      await page.getByRole("button", { name: "Columns…" }).click();
      const chooser = page.getByRole("dialog", { name: "Columns shown" });
      await chooser.getByText("Internal columns (12)").click();
      expect(await chooser.getByRole("checkbox", { name: /uuid$/ }).isChecked()).toBe(false);
      expect(await chooser.getByRole("checkbox", { name: /storage_volume$/ }).isChecked()).toBe(false);
      await chooser.getByRole("checkbox", { name: /^Proto / }).uncheck();
      await chooser.getByRole("checkbox", { name: /^User-Agent / }).check();
      await page.keyboard.press("Escape");
      await chooser.waitFor({ state: "detached" });
      expect(await headers(page)).toEqual([
        "",
        "Date",
        "Method",
        "From user",
        "To user",
        "R-URI",
        "Source",
        "Destination",
        "Call-ID",
        "Capture ID",
        "Node",
        "User-Agent",
      ]);
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("cell", { name: "svc-test/1.0" })
        .first()
        .waitFor();
      // The layout is saved 300 ms after the last change: wait for it before the reload below.
      await waitFor("the chosen columns saved", async () => (await homeColumns())?.includes("user_agent"));

      // 3. Save the search; the dialog closes on Esc, and saves with a name.
      await form.getByRole("button", { name: "Save filters…" }).click();
      const dialog = page.getByRole("dialog", { name: "Save filters" });
      await dialog.waitFor();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      await form.getByRole("button", { name: "Save filters…" }).click();
      await dialog.getByLabel("Name").fill("From 1001");
      expect(await dialog.getByRole("checkbox", { name: "Restore the time range (Last 6 hours)" }).isChecked()).toBe(
        true,
      );
      await dialog.getByRole("button", { name: "Save" }).click();
      await dialog.waitFor({ state: "detached" });
      expect(await savedVia(admin)).toMatchObject([
        { name: "From 1001", filters: { from_user: "1001" }, range: { minutes: 360 } },
      ]);

      // 4. After a reload the form is empty (the dashboard range is kept: set it to another one);
      // loading restores both and searches.
      await page.reload();
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      expect(await form.getByLabel("From User").inputValue()).toBe("");
      await pickRange("Last hour");
      await form.getByRole("button", { name: "Saved filters" }).click();
      await page.getByRole("dialog", { name: "Saved filters" }).getByRole("button", { name: "Load From 1001" }).click();
      expect(await form.getByLabel("From User").inputValue()).toBe("1001");
      await rangeButton("Last 6 hours").waitFor();
      await rowCount(page, 11);
      expect(
        new Set(await resultRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label")))),
      ).toEqual(new Set([`Open call ${answered}`, `Open call ${busy}`]));
      // The chosen columns came back with the dashboard.
      expect(await headers(page)).toContain("User-Agent");
      expect(await headers(page)).not.toContain("Proto");

      // 5. Rows 1..5 by click and Shift+click (the busy call's 4, the answered call's newest), opened together.
      const boxes = page
        .getByRole("table", { name: "Search results" })
        .getByRole("checkbox", { name: /^Select .* of call / });
      await boxes.nth(0).click();
      await boxes.nth(4).click({ modifiers: ["Shift"] });
      const selection = page.getByRole("group", { name: "Selected rows" });
      await selection.getByText("5 rows · 2 calls selected").waitFor();
      expect(await boxes.evaluateAll((els) => els.map((e) => (e as HTMLInputElement).checked))).toEqual([
        ...Array(5).fill(true),
        ...Array(6).fill(false),
      ]);
      await selection.getByRole("button", { name: "Open 2 calls together" }).click();
      const view = page.getByRole("dialog", { name: "2 calls together" });
      const ids = view.getByRole("region", { name: "Call-IDs in this view" });
      await ids.getByText(busy, { exact: true }).waitFor();
      await ids.getByText(answered, { exact: true }).waitFor();
      await waitFor(
        "11 arrows on one ladder",
        async () =>
          (await view
            .getByRole("group", { name: /^Call flow/ })
            .getByRole("button")
            .count()) === 11,
      );
      await view.getByRole("tab", { name: "Messages" }).click();
      const callIdCells = await view
        .getByRole("table", { name: "Messages" })
        .getByRole("row")
        .evaluateAll((rows) => rows.slice(1).map((r) => r.lastElementChild?.textContent ?? ""));
      expect(callIdCells.filter((c) => c === answered)).toHaveLength(7);
      expect(callIdCells.filter((c) => c === busy)).toHaveLength(4);
      // Call info: one summary per Call-ID (the busy call is not read as part of the answered one).
      await view.getByRole("tab", { name: "Call info" }).click();
      await view
        .getByRole("region", { name: `Call ${answered}` })
        .getByRole("status")
        .filter({ hasText: /^Completed/ })
        .waitFor();
      await view
        .getByRole("region", { name: `Call ${busy}` })
        .getByRole("status")
        .filter({ hasText: /^Busy \(486 Busy Here\)/ })
        .waitFor();
      // Export: the files, the share link and the dashboard link hold both Call-IDs.
      await view.getByRole("tab", { name: "Export" }).click();
      await view.getByText("Downloads and links hold all 2 Call-IDs of this view:").waitFor();
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        view.getByRole("button", { name: "Download PCAP" }).last().click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^calls-.+-and-1-more-\d{8}T\d{6}\.pcap$/);
      const pcapText = Buffer.from(await Bun.file((await download.path())!).arrayBuffer()).toString("latin1");
      const inPcap = (id: string) => pcapText.split(`Call-ID: ${id}\r\n`).length - 1;
      expect([inPcap(answered), inPcap(busy)]).toEqual([7, 4]);
      await view.getByRole("button", { name: "Create share link" }).click();
      const shared = await (await fetch(await view.getByLabel("Text link").inputValue())).text();
      expect([shared.includes(answered), shared.includes(busy)]).toEqual([true, true]);
      const deep = new URL(await view.getByLabel("Dashboard link").inputValue());
      expect(new Set(deep.searchParams.get("call_id")!.split(";"))).toEqual(new Set([answered, busy]));
      await page.keyboard.press("Escape");
      await view.waitFor({ state: "detached" });
      // The dashboard link opens the search of both calls and the view of both (docs/DASHBOARD.md "Deep links").
      await page.goto(deep.href);
      await rowCount(page, 11);
      expect(
        new Set(await resultRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label")))),
      ).toEqual(new Set([`Open call ${answered}`, `Open call ${busy}`]));
      await page.getByRole("dialog", { name: "2 calls together" }).waitFor();
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });

      // 6. Reset the columns to the default; it holds after a reload too.
      await page.getByRole("button", { name: "Columns…" }).click();
      await chooser.getByRole("button", { name: "Reset to default" }).click();
      await page.mouse.click(5, 880); // an outside click closes the chooser
      await chooser.waitFor({ state: "detached" });
      expect(await headers(page)).toContain("Proto");
      await waitFor("the default columns saved", async () => (await homeColumns())?.length === 0);
      // The address still names both calls: the reload opens their view again.
      await page.reload();
      await page.getByRole("dialog", { name: "2 calls together" }).waitFor();
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
      await form.getByRole("button", { name: "Saved filters" }).click();
      await page.getByRole("dialog", { name: "Saved filters" }).getByRole("button", { name: "Load From 1001" }).click();
      await rowCount(page, 11);
      expect(await headers(page)).toContain("Proto");
      expect(await headers(page)).not.toContain("User-Agent");

      // 7. Another user does not see it; the owner still does after a new login, renames and deletes it.
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn("olga", OTHER_PASSWORD);
      await form.getByRole("button", { name: "Saved filters" }).click();
      await page
        .getByRole("dialog", { name: "Saved filters" })
        .getByText(/^No saved filters for call yet/)
        .waitFor();
      await page.keyboard.press("Escape");
      expect(await savedVia(await login("olga", OTHER_PASSWORD))).toEqual([]);
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn("admin", PASSWORD);
      await form.getByRole("button", { name: "Saved filters" }).click();
      const list = page.getByRole("dialog", { name: "Saved filters" });
      await list.getByRole("button", { name: "Rename From 1001" }).click();
      const rename = page.getByRole("dialog", { name: "Rename saved filters" });
      await rename.getByLabel("Name").fill("Calls of 1001");
      await rename.getByRole("button", { name: "Rename" }).click();
      await rename.waitFor({ state: "detached" });
      expect((await savedVia(admin)).map((s) => s.name)).toEqual(["Calls of 1001"]);
      await form.getByRole("button", { name: "Saved filters" }).click();
      page.once("dialog", (d) => void d.accept());
      await list.getByRole("button", { name: "Delete Calls of 1001" }).click();
      await list.getByText(/^No saved filters for call yet/).waitFor();
      expect(await savedVia(admin)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  90_000,
);
