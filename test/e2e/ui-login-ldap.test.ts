/**
 * LDAP login in a real browser (docs/AUTH.md "LDAP login", "The login page"): the login page offers LDAP
 * first when its position is lower, a directory user signs in against a real slapd over StartTLS,
 * and with every LDAP host down the page says so in words naming the hosts, not "wrong password".
 */
import { expect } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { person, SERVICE_DN, SERVICE_PASSWORD, startSlapd, SUFFIX } from "../peers/slapd.ts";
import { OPENSSL } from "../peers/tls.ts";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const LDIF = [
  `dn: ou=people,${SUFFIX}\nobjectClass: organizationalUnit\nou: people`,
  person("erin", "erin-pw-5", "Erin", "Engineer"),
].join("\n\n");

async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/`);
  const form = page.getByRole("form", { name: "Sign in" });
  await form.getByLabel("Username").waitFor();
  // LDAP (position 0) is listed before Internal and preselected
  const radios = form.getByRole("radio");
  expect(await radios.evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual([
    "ldap",
    "internal",
  ]);
  expect(await form.getByRole("radio", { name: "LDAP" }).isChecked()).toBe(true);
  await form.getByLabel("Username").fill(username);
  await form.getByLabel("Password").fill(password);
  await form.getByRole("button", { name: "Sign in" }).click();
}

peerTest(
  "login page: a directory user signs in with LDAP; with LDAP down the page names the hosts tried",
  [PEERS.chromium, PEERS.slapd, OPENSSL],
  async () => {
    await buildUi();
    await using ldapDir = tempDir("svc-slapd-");
    await using slapd = await startSlapd(ldapDir.path, LDIF);
    const ldap = {
      enable: true,
      host: "127.0.0.2 127.0.0.1",
      port: slapd.port,
      server_name: "localhost",
      insecure_skip_verify: true,
      bind_dn: SERVICE_DN,
      bind_password: SERVICE_PASSWORD,
      base: SUFFIX,
      position: 0,
    };
    const auth = { admin_password_hash: sha256Hex("local-admin-pw-1"), internal_position: 1 };
    await using dir = tempDir("svc-ui-ldap-");
    await using a = await startTestAppliance(dir.path, { coordinator: { auth, ldap } });
    await using dir2 = tempDir("svc-ui-ldap-down-");
    await using down = await startTestAppliance(dir2.path, {
      coordinator: { auth, ldap: { ...ldap, host: `127.0.0.2 127.0.0.3` } },
    });
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await signIn(page, a.app.coordinatorUrl!, "erin", "wrong-pw");
      await page.getByRole("alert").filter({ hasText: "invalid username or password" }).waitFor();
      await signIn(page, a.app.coordinatorUrl!, "erin", "erin-pw-5");
      await page.getByRole("button", { name: "Sign out" }).waitFor();

      const page2 = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await signIn(page2, down.app.coordinatorUrl!, "erin", "erin-pw-5");
      const alert = page2.getByRole("alert").filter({ hasText: "LDAP login is unavailable" });
      await alert.waitFor();
      const text = await alert.innerText();
      expect(text).toContain(`ldap://127.0.0.2:${slapd.port} (connection refused)`);
      expect(text).toContain(`ldap://127.0.0.3:${slapd.port} (connection refused)`);
      // the whole message is visible: nothing clipped
      expect(await alert.evaluate((el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight)).toBe(
        true,
      );
    } finally {
      await browser.close();
    }
  },
  120_000,
);
