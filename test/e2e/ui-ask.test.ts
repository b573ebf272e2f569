/**
 * The Ask widget in a real browser (docs/MCP.md, docs/UI.md): a question → parsed filters, the
 * parser that answered, the generated SQL in sql mode, the matching messages; empty and error states.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { applianceConfig, ingestCalls, PASSWORD } from "../integration/mcp-harness.ts";

const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

peerTest(
  "Ask widget: filters, parser, generated SQL, answer rows; empty and refused questions",
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
