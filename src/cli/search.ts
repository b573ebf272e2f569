import { writeFileSync } from "node:fs";
import { AppError } from "../core/index.ts";
import { UsageError, formatHelp, parseArgs } from "./args.ts";
import { coordinatorClient } from "./coordinator-client.ts";
import { runInteractive } from "./interactive/run.ts";
import type { CliIo } from "./io.ts";
import { runChart } from "./search-chart.ts";
import { fetchRows } from "./search-fetch.ts";
import { LIVE_ONLY_FLAGS, MAX_LIMIT, SEARCH_FLAGS, formFromFlags, searchOptions } from "./search-options.ts";
import { runLive } from "./search-live.ts";
import { clientFlagsFromEnv, passwordFrom } from "./secret-input.ts";
import { countLine, limitNote, readableColumns, renderOutput } from "./search-output.ts";
import { terminalWidth } from "./views/columns.ts";
import { rowsToPcap } from "./views/pcap.ts";
import { fetchCallMessages, planPcapCalls } from "./search-pcap.ts";

/**
 * `svc search` (docs/CLI.md "Search client"). Exit codes: 0 when the search ran (also when it found
 * no rows: the count line says `0 rows`, so scripts read the count, not the code), 1 on an error
 * (server, network, auth, no SIP payload for a pcap), 2 on a usage error. Errors are one line on
 * stderr, printed by main.ts. When the limit cut the answer, one more stderr line says how many
 * rows matched (`limitNote`); the exit code stays 0.
 */
const SUMMARY = [
  "Search captured messages on a coordinator and print them as a table, vertical rows, CSV, JSON,",
  "an ASCII chart, a SIP ladder, or write a PCAP. Exit 0 when the search ran (a count line says how",
  "many rows), 1 on an error, 2 on a usage error.",
].join("\n");

export const SEARCH_HELP = formatHelp(
  "svc search --host <host:port> [--user <u> --pass <p> | --token <jwt>] [filters] [--format <f>] [-o <file>]",
  SUMMARY,
  SEARCH_FLAGS,
);

export async function runSearch(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags } = parseArgs(argv, SEARCH_FLAGS);
  if (flags.help) {
    await io.out(`${SEARCH_HELP}\n`);
    return 0;
  }
  clientFlagsFromEnv(flags, io.env);
  // Flags named on the command line (defaults of --from, --to, --limit do not count).
  const given = new Set(argv.filter((a) => a.startsWith("-")).map((a) => a.replace(/^--?/, "").replace(/=.*$/s, "")));
  if (flags.live === true) return await runLive(flags, given, io);
  const live = LIVE_ONLY_FLAGS.find((k) => given.has(k));
  if (live) throw new UsageError(`--${live} needs --live`);
  const form = formFromFlags(flags);
  const pass = await passwordFrom(
    { pass: form.pass, passStdin: flags["pass-stdin"] === true, user: form.user?.trim() },
    io,
  );
  if (pass !== undefined) form.pass = pass;
  const debug = flags.debug === true;
  if (flags.interactive === true) {
    searchOptions({ ...form, host: form.host ?? "-" }, io.now(), { interactive: true }); // flag errors stop before the screen opens
    return await runInteractive(form, io, debug);
  }
  const o = searchOptions(form, io.now());
  if (o.format === "chart") return await runChart(o, io, debug);
  // A PCAP holds whole calls: without --limit the search looks at up to MAX_LIMIT matches, and
  // planPcapCalls refuses a search that still stops there rather than write a capture missing calls.
  const wholeCalls = o.format === "pcap" && !o.sql;
  if (wholeCalls && !given.has("limit")) o.query.limit = MAX_LIMIT;
  const client = coordinatorClient(o, io, debug);
  const r = await fetchRows(client, o);
  for (const n of r.notes) await io.err(`${n}\n`);
  const cut = limitNote(r);
  const finish = async () => {
    if (cut) await io.err(`${cut}\n`);
    return 0;
  };

  if (o.format === "pcap") {
    let rows = r.rows;
    let calls = "";
    if (wholeCalls) {
      const plan = planPcapCalls(r, given.has("limit"));
      if (!plan.ok)
        throw new AppError(
          plan.reason === "NO_MATCH" ? "NOT_FOUND" : "VALIDATION",
          `no PCAP written: ${plan.detail ?? plan.reason}`,
        );
      const partial: string[] = [];
      rows = await fetchCallMessages(client, o, plan.value.callIds, partial);
      for (const n of partial) await io.err(`${n}\n`);
      const n = plan.value.callIds.length;
      calls = ` of ${n} ${n === 1 ? "call" : "calls"}`;
    }
    const p = rowsToPcap(rows);
    if (!p.ok) throw new AppError("NOT_FOUND", `no SIP payload to write: ${p.detail ?? p.reason}`);
    writeFileSync(o.output!, p.value.bytes);
    const skipped = p.value.skipped ? ` (${p.value.skipped} rows without payload or address skipped)` : "";
    await io.err(`wrote ${p.value.written} frames${calls} to ${o.output}${skipped}\n`);
    return await finish();
  }
  const out = renderOutput(o.format, r, {
    ...(o.fields ? { fields: o.fields } : {}),
    width: terminalWidth(io.env, io.columns),
    ...readableColumns(o),
  });
  if (o.output) {
    writeFileSync(o.output, out.text);
    await io.err(`wrote ${countLine(r)} as ${o.format} to ${o.output}\n`);
    return await finish();
  }
  await io.out(out.text);
  if (out.summary) await io.err(`${out.summary}\n`);
  return await finish();
}
