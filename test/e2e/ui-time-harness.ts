/**
 * What the browser tests of the time picker and the popovers share (docs/UI.md "Time range",
 * "Popovers"): an appliance with two calls ingested as HEP over UDP (1 and 40 minutes old), a
 * signed-in Chromium page in a known zone that records the search bodies it sends, and the checks
 * one popover must pass.
 */
import { expect } from "bun:test";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-time-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
export const MIN = 60_000;
// The browser runs in Tokyo (UTC+09:00, no DST), so the zone label and local wall times are known.
export const ZONE = "Asia/Tokyo";
export const ZONE_EAST_MS = 540 * MIN;

/** INVITE, 200 OK, ACK of one call at `t0Ms`. */
function call(callId: string, t0Ms: number): Uint8Array[] {
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
      nodeName: "edge-time",
      payload,
    });
  return [
    hep(invite({ ...p, srcIp: "10.30.0.11" }), 0, "10.30.0.11", "10.30.0.1"),
    hep(response(200, "OK", "INVITE", { ...p, toTag: "t-1" }), 300, "10.30.0.1", "10.30.0.11"),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 320, "10.30.0.11", "10.30.0.1"),
  ];
}

export interface Sent {
  limit: number;
  from: number;
  to: number;
}

export async function setUp(dir: string) {
  const built = await buildUi();
  expect(built.files.map((f) => f.path)).toContain("assets/app.js");
  const appliance = await startTestAppliance(dir, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = appliance.app;
  const now = Date.now();
  const udp = await Bun.udpSocket({});
  for (const p of [
    ...call(`near-${crypto.randomUUID()}`, now - MIN),
    ...call(`far-${crypto.randomUUID()}`, now - 40 * MIN),
  ])
    udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  await waitFor("both calls in the lake", async () => {
    await lake!.sync();
    const r = await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call");
    return Number(r.rows[0]!.n) === 6;
  });
  const base = coordinatorUrl!;
  const login = await fetch(`${base}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const bearer = ((await login.json()) as { token: string }).token;
  const layout = async () => {
    const r = await fetch(`${base}/api/v4/dashboards?sort=position`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    const items = (
      (await r.json()) as {
        data: { items: Array<{ name: string; layout: Array<{ type: string; config?: Record<string, unknown> }> }> };
      }
    ).data.items;
    return items.find((d) => d.name === "Home")!.layout;
  };
  return { appliance, base, layout };
}

export async function openBrowser(base: string, viewport = { width: 1280, height: 720 }) {
  const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  const context: BrowserContext = await browser.newContext({ viewport, timezoneId: ZONE });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error" && !/401|status of 4\d\d/.test(m.text())) errors.push(m.text());
  });
  const sent: Sent[] = [];
  context.on("request", (r) => {
    if (r.method() !== "POST" || !r.url().endsWith("/transactions/search")) return;
    const b = r.postDataJSON() as { param: { limit: number }; timestamp: { from: number; to: number } };
    sent.push({ limit: b.param.limit, from: b.timestamp.from, to: b.timestamp.to });
  });
  await page.goto(`${base}/`);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
  return { browser, context, page, errors, sent };
}

/** The next search body with `limit` sent after `mark` (an index into `sent`). */
export const nextSearch = (sent: Sent[], mark: number, limit: number) =>
  waitFor(`a search with limit ${limit}`, () => sent.slice(mark).find((s) => s.limit === limit));
/** How long a span that search covered. */
export const spanOf = async (sent: Sent[], mark: number, limit: number) => {
  const s = await nextSearch(sent, mark, limit);
  return s.to - s.from;
};

export const isFocused = (l: Locator) => l.evaluate((el) => el === document.activeElement);
export const focusInside = (l: Locator) =>
  l.evaluate((el) => el.contains(document.activeElement) && el !== document.activeElement);

/** Tab from the start of the page until `target` has focus: it is reachable by keyboard alone. */
export async function tabTo(page: Page, target: Locator) {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (let i = 0; i < 250; i++) {
    await page.keyboard.press("Tab");
    if (await isFocused(target)) return;
  }
  throw new Error(`${String(target)} is not reachable with Tab`);
}

/** The panel lies inside the viewport and nothing clips or covers it: its corners and centre are its own. */
export async function expectFullyShown(page: Page, panel: Locator) {
  const box = (await panel.boundingBox())!;
  const vp = page.viewportSize()!;
  const inside =
    box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width + 0.5 && box.y + box.height <= vp.height + 0.5;
  expect({ inside, box, vp }).toEqual({ inside: true, box, vp });
  const hidden = await panel.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const points = [
      [r.left + 3, r.top + 3],
      [r.right - 3, r.top + 3],
      [r.left + 3, r.bottom - 3],
      [r.right - 3, r.bottom - 3],
      [(r.left + r.right) / 2, (r.top + r.bottom) / 2],
    ];
    return points.filter(([x, y]) => {
      const hit = document.elementFromPoint(x!, y!);
      return !hit || !el.contains(hit);
    });
  });
  expect(hidden).toEqual([]);
}

/**
 * One popover: opens by click, shows whole, closes on Esc with focus back on the trigger, closes on a
 * click outside; then by keyboard alone: Tab to the trigger, open with `opener`, focus is inside,
 * ArrowDown keeps it inside, and `keyboardUse` checks where it went and does the rest (Enter selects).
 */
export async function checkPopover(
  page: Page,
  trigger: Locator,
  panel: Locator,
  opener: "Enter" | "ArrowDown",
  keyboardUse: () => Promise<void>,
) {
  expect(await trigger.getAttribute("aria-haspopup")).toMatch(/^(menu|dialog)$/);
  expect(await trigger.getAttribute("aria-expanded")).toBe("false");
  await trigger.click();
  await panel.waitFor();
  expect(await trigger.getAttribute("aria-expanded")).toBe("true");
  expect(await trigger.getAttribute("aria-controls")).toBe(await panel.getAttribute("id"));
  await expectFullyShown(page, panel);
  await page.keyboard.press("Escape");
  await panel.waitFor({ state: "detached" });
  expect(await isFocused(trigger)).toBe(true);
  expect(await trigger.getAttribute("aria-expanded")).toBe("false");

  await trigger.click();
  await panel.waitFor();
  // Outside: the padding of the top bar (nothing to activate there; a panel keeps 8 px from the edges).
  await page.mouse.click(page.viewportSize()!.width - 3, 3);
  await panel.waitFor({ state: "detached" });

  await tabTo(page, trigger);
  await page.keyboard.press(opener);
  await panel.waitFor();
  expect(await focusInside(panel)).toBe(true);
  await page.keyboard.press("ArrowDown");
  expect(await focusInside(panel)).toBe(true);
  await keyboardUse();
}
