/**
 * The Ask widget in a real browser (docs/MCP.md, docs/UI.md): a question → what was understood and
 * ignored (docs/MCP.md "Answers"), parsed filters, the parser that answered, the generated SQL in sql
 * mode, the matching messages; empty, not understood and error states.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { applianceConfig, ingestCalls, PASSWORD } from "../integration/mcp-harness.ts";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

peerTest(
  "Ask widget: understood/ignored line, filters, parser, generated SQL, answer rows; empty, not understood and refused questions",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-ask-");
    await using a = await startTestAppliance(dir.path, applianceConfig());
    const calls = await ingestCalls(a);
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await page.goto(`${a.app.coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      await page.getByLabel("Add widget").selectOption({ label: "Ask" });
      const ask = page.getByRole("region", { name: "Ask" });

      await ask.getByLabel("Question").fill(`show sql for call-id ${calls.tricky} today`);
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask.getByRole("status").filter({ hasText: "Parsed by the regex parser · SQL" }).waitFor();
      const filters = ask.getByLabel("Parsed filters");
      expect(await filters.getByText(calls.tricky, { exact: true }).count()).toBe(1);
      expect(await filters.getByText("today", { exact: true }).count()).toBe(1);
      expect(await ask.getByLabel("Understood").textContent()).toBe(`Understood: Call-ID ${calls.tricky}, today (UTC)`);
      expect(await ask.getByLabel("Generated SQL").textContent()).toContain(`session_id = '${calls.tricky}'`);
      const rows = ask.getByRole("table", { name: "Answer" }).getByRole("row");
      expect(await rows.count()).toBe(2); // header + the INVITE
      expect(await rows.nth(1).textContent()).toContain("INVITE");
      expect(await rows.nth(1).textContent()).toContain("10.33.0.1:5060");

      await ask.getByLabel("Question").fill(`call-id ${calls.invite}`);
      await ask.getByLabel("Rows").fill("2");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask.getByText("Showing the newest 2 of 3 messages (limit reached; narrow the question)").waitFor();
      const limited = ask.getByRole("table", { name: "Answer" }).getByRole("row");
      expect(await limited.count()).toBe(3);
      expect(await limited.nth(1).textContent()).toContain("BYE");
      await ask.getByLabel("Rows").fill("100");

      await ask.getByLabel("Question").fill("INVITE from caller nobody-here");
      await ask.getByLabel("Mode").selectOption("structured");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask.getByText("No messages match these filters.").waitFor();
      expect(await ask.getByLabel("Generated SQL").count()).toBe(0);

      await ask.getByLabel("Question").fill("please show INVITEs from 1001 with bad audio");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      const understood = ask.getByLabel("Understood").filter({ hasText: "Ignored" });
      await understood.waitFor();
      expect(await understood.textContent()).toBe(
        "Understood: method INVITE, from user 1001, last 1 h (default) · Ignored: 'bad', 'audio'",
      );
      const invites = ask.getByRole("table", { name: "Answer" }).getByRole("row");
      expect(await invites.count()).toBe(2); // header + 1001's INVITE
      expect(await invites.nth(1).textContent()).toContain(calls.invite);

      await ask.getByLabel("Question").fill("how is the weather");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask
        .getByLabel("Understood")
        .filter({ hasText: "Not understood: no word maps to a filter (ignored: 'weather'); nothing was searched." })
        .waitFor();
      expect(await ask.getByRole("table", { name: "Answer" }).count()).toBe(0);
      expect(await ask.getByText("No messages match these filters.").count()).toBe(0);

      await ask.getByLabel("Question").fill("SELECT * FROM read_csv('/etc/passwd')");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask.getByRole("alert").filter({ hasText: "is a SQL statement, which is never run" }).waitFor();

      await ask.getByLabel("Question").fill("INVITE");
      await ask.getByLabel("Parser").selectOption("llm");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask.getByRole("alert").filter({ hasText: "mcp.llm.enable is false" }).waitFor();
    } finally {
      await browser.close();
    }
  },
  120_000,
);
