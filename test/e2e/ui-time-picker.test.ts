/**
 * The dashboard time range in a real browser (docs/UI.md "Time range"): Debian's
 * chromium via playwright-core against the appliance started in-process. What a search covered is
 * read from the request bodies the page sends and from the result counts it shows.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { MIN, ZONE, ZONE_EAST_MS, nextSearch, openBrowser, setUp, spanOf } from "./ui-time-harness.ts";

peerTest(
  "time picker: one dashboard range every search follows, a widget's own range on request, both kept over a reload and shared by the address",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-time-");
    const { appliance, base, layout } = await setUp(dir.path);
    await using _a = appliance;
    const { browser, context, page, errors, sent } = await openBrowser(base);
    try {
      const header = (name: RegExp) =>
        page.getByRole("button", { name: new RegExp(`^Dashboard time range: ${name.source}`) });
      const picker = page.getByRole("dialog", { name: "Dashboard time range" });
      const callSearch = page.getByRole("region", { name: "Call search" });
      const protoSearch = page.getByRole("region", { name: "Protocol search" });
      const count = page.getByRole("region", { name: "Results" }).getByRole("status");

      // The browser zone is shown: name and offset.
      await header(/Last hour, UTC\+09:00$/).click();
      await picker.getByText(`Times in ${ZONE} (UTC+09:00)`).waitFor();
      await picker.getByRole("button", { name: "Last 15 minutes" }).click();
      await picker.waitFor({ state: "detached" });
      await header(/Last 15 minutes/).waitFor();
      expect(new URL(page.url()).searchParams.get("from")).toBe("now-15m");

      // A second search widget on the same dashboard (limit 100 tells its requests apart).
      await page.getByLabel("Add widget").selectOption({ label: "Protocol search" });
      await protoSearch.getByLabel("Limit").selectOption("100");
      let mark = sent.length;
      await callSearch.getByRole("button", { name: "Search", exact: true }).click();
      await protoSearch.getByRole("button", { name: "Search", exact: true }).click();
      for (const limit of [200, 100]) {
        const s = await nextSearch(sent, mark, limit);
        expect(s.to - s.from).toBe(15 * MIN);
      }
      await count.filter({ hasText: /^3 messages/ }).waitFor(); // only the call of a minute ago

      // Changing the dashboard range runs both searches again over it.
      mark = sent.length;
      await header(/Last 15 minutes/).click();
      await picker.getByRole("button", { name: "Last hour" }).click();
      for (const limit of [200, 100]) expect(await spanOf(sent, mark, limit)).toBe(60 * MIN);
      await count.filter({ hasText: /^6 messages/ }).waitFor();

      // The protocol search gets its own range: a badge in its title bar, its own picker.
      await protoSearch.getByRole("button", { name: "Protocol search widget menu" }).click();
      await page.getByRole("menuitem", { name: "Use own time range" }).click();
      const badge = protoSearch.getByRole("button", { name: /^Own time range of Protocol search: Last hour/ });
      await badge.waitFor();
      mark = sent.length;
      await badge.click();
      await page
        .getByRole("dialog", { name: "Own time range of Protocol search" })
        .getByRole("button", { name: "Last 6 hours" })
        .click();
      expect(await spanOf(sent, mark, 100)).toBe(360 * MIN);
      await protoSearch.getByRole("button", { name: /^Own time range of Protocol search: Last 6 hours/ }).waitFor();

      // The dashboard range moves on; the overridden widget stays where it is.
      mark = sent.length;
      await header(/Last hour/).click();
      await picker.getByRole("button", { name: "Last 5 minutes" }).click();
      expect(await spanOf(sent, mark, 200)).toBe(5 * MIN);
      await count.filter({ hasText: /^3 messages/ }).waitFor();
      expect(sent.slice(mark).filter((s) => s.limit === 100)).toEqual([]);

      // Reload: the dashboard range from the address, the widget's own range from the saved layout.
      await waitFor(
        "the own range saved",
        async () => (await layout()).find((w) => w.type === "protocol-search")?.config?.time_range,
      );
      expect((await layout()).find((w) => w.type === "protocol-search")?.config?.time_range).toEqual({
        from: "now-6h",
        to: "now",
      });
      await page.reload();
      await header(/Last 5 minutes, UTC\+09:00$/).waitFor();
      await protoSearch.getByRole("button", { name: /^Own time range of Protocol search: Last 6 hours/ }).waitFor();
      mark = sent.length;
      await callSearch.getByRole("button", { name: "Search", exact: true }).click();
      await protoSearch.getByRole("button", { name: "Search", exact: true }).click();
      expect(await spanOf(sent, mark, 200)).toBe(5 * MIN);
      expect(await spanOf(sent, mark, 100)).toBe(360 * MIN);

      // "Follow dashboard" drops the badge and searches the dashboard range again.
      mark = sent.length;
      await protoSearch.getByRole("button", { name: "Protocol search widget menu" }).click();
      await page.getByRole("menuitem", { name: "Follow dashboard time range" }).click();
      await protoSearch.getByRole("button", { name: /^Own time range/ }).waitFor({ state: "detached" });
      expect(await spanOf(sent, mark, 100)).toBe(5 * MIN);

      // Custom from/to, typed in Tokyo time: a reversed range is refused in words, a valid one applies.
      await header(/Last 5 minutes/).click();
      const from = picker.getByLabel("From", { exact: true });
      const to = picker.getByLabel("To", { exact: true });
      await from.fill("2026-11-20T12:00:00");
      await to.fill("2026-11-20T11:00:00");
      await picker.getByRole("button", { name: "Apply range" }).click();
      await picker.getByRole("alert").filter({ hasText: "“From” must be before “To”." }).waitFor();
      expect(await from.getAttribute("aria-invalid")).toBe("true");
      await from.fill("");
      await picker.getByRole("button", { name: "Apply range" }).click();
      await picker.getByRole("alert").filter({ hasText: "Enter both “From” and “To”." }).waitFor();
      const nowWall = new Date(Date.now() + ZONE_EAST_MS);
      const day = nowWall.toISOString().slice(0, 10);
      const fromMs = Date.parse(`${day}T00:00:00Z`) - ZONE_EAST_MS - 24 * 60 * MIN; // yesterday 00:00 Tokyo
      const toMs = Date.parse(`${day}T00:00:00Z`) - ZONE_EAST_MS + 24 * 60 * MIN - 1000; // today 23:59:59 Tokyo
      const yesterday = new Date(Date.parse(`${day}T00:00:00Z`) - 24 * 60 * MIN).toISOString().slice(0, 10);
      await from.fill(`${yesterday}T00:00:00`);
      await to.fill(`${day}T23:59:59`);
      mark = sent.length;
      await picker.getByRole("button", { name: "Apply range" }).click();
      await header(new RegExp(`${yesterday} 00:00:00 → ${day} 23:59:59`)).waitFor();
      for (const limit of [200, 100]) {
        const s = await nextSearch(sent, mark, limit);
        expect([s.from, s.to]).toEqual([fromMs, toMs]);
      }
      expect(new URL(page.url()).searchParams.get("from")).toBe(String(fromMs));
      expect(new URL(page.url()).searchParams.get("to")).toBe(String(toMs));

      // UTC instead of local: the same instants, shown and typed in UTC, and the address says so.
      await header(/./).click();
      await picker.getByRole("group", { name: "Show times in" }).getByRole("button", { name: "UTC" }).click();
      await picker.getByText("Times in UTC").waitFor();
      // 24 h text like every time shown, never the locale's AM/PM of a datetime-local input.
      expect(await from.inputValue()).toBe(new Date(fromMs).toISOString().slice(0, 19).replace("T", " "));
      expect(await to.inputValue()).toBe(new Date(toMs).toISOString().slice(0, 19).replace("T", " "));
      await to.fill("2026-11-20 13:05");
      await to.fill(`${day} 23:59:59`);
      await page.keyboard.press("Escape");
      const utcLabel = `${new Date(fromMs).toISOString().slice(0, 19).replace("T", " ")} → ${new Date(toMs).toISOString().slice(0, 19).replace("T", " ")}`;
      await header(new RegExp(`${utcLabel}, UTC$`)).waitFor();
      expect(new URL(page.url()).searchParams.get("tz")).toBe("utc");

      // Shared by the address: a new tab opens the same range in the same zone.
      const shared = await context.newPage();
      await shared.goto(page.url());
      await shared.getByRole("button", { name: new RegExp(`^Dashboard time range: ${utcLabel}, UTC$`) }).waitFor();
      // An address with a range that cannot be read says so and falls back to the last hour.
      await shared.goto(`${base}/?from=banana&to=now`);
      await shared.getByText(/The time range in the address was not used \(from=banana is neither/).waitFor();
      await shared.getByRole("button", { name: /^Dashboard time range: Last hour/ }).waitFor();
      // A deep link to a call sets the range of its search and searches once.
      mark = sent.length;
      const linkFrom = Date.now() - 10 * MIN;
      const linkTo = Date.now();
      await shared.goto(`${base}/?call_id=no-such-call&from=${linkFrom}&to=${linkTo}`);
      await shared
        .getByRole("region", { name: "Results" })
        .getByText(/^No messages match/)
        .waitFor();
      expect(sent.slice(mark)).toEqual([{ limit: 200, from: linkFrom, to: linkTo }]);
      await shared.close();

      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
