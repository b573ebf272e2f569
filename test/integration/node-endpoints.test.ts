/**
 * The node port is unauthenticated (docs/ARCHITECTURE.md "Errors and request ids"), and its stats
 * showed the absolute data_path. No node answer — stats, check, HEP over HTTP, errors, unknown
 * routes — may name a directory of this machine.
 */
import { expect, test } from "bun:test";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

test("no node endpoint shows a filesystem path; stats keep data_path as the lake directory's own name", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path);
  const node = a.app.nodeUrl!;
  const json = { "content-type": "application/json" };
  const answers: Array<[string, Response]> = [
    ["stats", await fetch(`${node}/api/v1/metadata/stats`)],
    ["health", await fetch(`${node}/health`)],
    [
      "check",
      await fetch(`${node}/api/v1/metadata/check`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ min_ts: 0, max_ts: 1e18 }),
      }),
    ],
    ["check, bad body", await fetch(`${node}/api/v1/metadata/check`, { method: "POST", headers: json, body: "[1]" })],
    ["check, not JSON", await fetch(`${node}/api/v1/metadata/check`, { method: "POST", headers: json, body: "{" })],
    [
      "hep, garbage",
      await fetch(`${node}/api/v1/hep`, { method: "POST", body: new Uint8Array([0x48, 0x45, 0x50, 0x33, 0, 1]) }),
    ],
    ["unknown route", await fetch(`${node}/api/v1/nope/../../etc/passwd`)],
  ];
  for (const [what, r] of answers) {
    const text = await r.text();
    expect({
      what,
      status: r.status < 500,
      leaks: text.includes(dir.path) || /"\/(tmp|var|home|root|etc)\//.test(text),
    }).toEqual({ what, status: true, leaks: false });
    if (what === "stats") expect(JSON.parse(text)).toMatchObject({ data_path: "lake/", catalog_type: "sqlite" });
  }
});
