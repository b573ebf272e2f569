/**
 * Run-profile rules over real files through runLoadgen (docs/LOADGEN.md "Run profiles", "Media and
 * RTCP reports"): report switches without hep_addr, per engine; errors of one engine of a composite
 * file name it; relative TLS files against the profile's folder, summary_json against the working
 * directory.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLoadgen, type LoadgenIo } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: LoadgenIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  const code = await runLoadgen(argv, io);
  return { code, out, err };
}

describe("loadgen profiles: report switches need hep_addr", () => {
  test.each(["hep_raw_rtcp", "hep_homer_lake_rtcp", "send_media_report"])("%s without hep_addr is refused in a flat profile and in one engine of a composite file", async (key) => {
    await using dir = tempDir("svc-loadgen-rules-");
    const file = join(dir.path, "p.json");
    writeFileSync(file, JSON.stringify({ remote_addr: "127.0.0.1:5999", total_calls: 1, [key]: true }));
    const flat = await run(["server", "-config", file]);
    expect(flat.err).toHaveLength(1);
    expect(flat.err[0]).toMatch(new RegExp(`^loadgen: ${key} needs hep_addr `));
    expect(flat.code).toBe(2);
    // The server mirrors (hep_addr, not reachable: nothing is sent before the check), the client does not.
    writeFileSync(
      file,
      JSON.stringify({ server: { scenario_name: "uas", local_port: 0, api_addr: "127.0.0.1:0", hep_addr: "127.0.0.1:9", [key]: true }, client: { remote_addr: "127.0.0.1:5999", [key]: true } }),
    );
    const composite = await run(["server", "-config", file]);
    expect(composite.err).toHaveLength(1);
    expect(composite.err[0]).toMatch(new RegExp(`^loadgen: (client-1: )?${key} needs hep_addr `));
    expect(composite.code).toBe(2);
    const check = await run(["profile", "check", file]);
    expect(check.err).toEqual([`loadgen: ${file}: engine client-1: ${key} needs hep_addr (the reports are sent as HEP; set -hep_addr host:port)`]);
    expect(check.code).toBe(2);
  });
});
