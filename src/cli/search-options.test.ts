import { describe, expect, test } from "bun:test";
import { UsageError, parseArgs } from "./args.ts";
import { FORM_FIELDS } from "./interactive/state.ts";
import { SEARCH_HELP } from "./search.ts";
import { liveOptions } from "./search-live.ts";
import { SEARCH_FLAGS, formFromFlags, parseFormat, searchOptions } from "./search-options.ts";
import { FILTERS } from "./search-request.ts";

const NOW = Date.UTC(2024, 4, 1, 12);
const opts = (argv: string[], interactive = false) =>
  searchOptions(formFromFlags(parseArgs(argv, SEARCH_FLAGS).flags), NOW, { interactive });
const usage = (argv: string[], interactive = false) => {
  try {
    opts(argv, interactive);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
};

describe("svc search options", () => {
  test("defaults: last hour, SIP calls, 50 rows, table", () => {
    const o = opts(["--host", "h:8080"]);
    expect(o.query).toEqual({
      proto: 1,
      eventType: "call",
      fromMs: NOW - 3_600_000,
      toMs: NOW,
      limit: 50,
      filters: {},
    });
    expect([o.format, o.grep, o.exclude, o.sql, o.output, o.fields]).toEqual([
      "table",
      [],
      [],
      undefined,
      undefined,
      undefined,
    ]);
  });

  test("every flag lands where it belongs", () => {
    const o = opts([
      "--host=https://h",
      "--user",
      "admin",
      "--pass",
      "pw",
      "--from",
      "2024-05-01",
      "--to",
      "2024-05-01 06:00:00",
      "--proto",
      "SIP",
      "--event-type",
      "registration",
      "--method",
      "register",
      "--call-id",
      "a;b",
      "--from-user",
      "110;112",
      "--to-user",
      "2%",
      "--src-ip",
      "10.0.0.1",
      "--dst-ip",
      "10.0.0.2",
      "--node",
      "edge",
      "--user-agent",
      "UA",
      "--payload",
      "P",
      "--limit",
      "50000",
      "--format",
      "ladder",
      "-o",
      "out.txt",
      "--fields",
      "timestamp, method ,",
      "--grep",
      "a=b,c",
      "--exclude",
      "x",
    ]);
    expect(o).toMatchObject({
      host: "https://h",
      user: "admin",
      pass: "pw",
      query: {
        proto: 1,
        eventType: "registration",
        fromMs: Date.UTC(2024, 4, 1),
        toMs: Date.UTC(2024, 4, 1, 6),
        limit: 50000,
        filters: {
          method: "register",
          callId: "a;b",
          fromUser: "110;112",
          toUser: "2%",
          srcIp: "10.0.0.1",
          dstIp: "10.0.0.2",
          node: "edge",
          userAgent: "UA",
          payload: "P",
        },
      },
      format: "callflow",
      output: "out.txt",
      fields: ["timestamp", "method"],
      grep: [{ source: "a=b,c", terms: [{ field: "a", text: "b" }, { text: "c" }] }],
      exclude: [{ source: "x", terms: [{ text: "x" }] }],
      ignoredWithSql: [],
    });
    expect(opts(["--host", "h", "--proto", "otlp-logs"]).query.eventType).toBe("default");
    expect(opts(["--host", "h", "--sql", "SELECT 1", "--method", "BYE"]).ignoredWithSql).toEqual(["--method"]);
  });

  test.each([
    [[], "--host is required"],
    [["--host", "h", "--limit", "0"], "--limit must be an integer from 1 to 50000"],
    [["--host", "h", "--limit", "50001"], "--limit must be an integer from 1 to 50000"],
    [["--host", "h", "--limit", "5.5"], "--limit must be an integer"],
    [["--host", "h", "--from", "soon"], '--from: "soon" is not a duration'],
    [["--host", "h", "--from", "1h", "--to", "2h"], "is after --to"],
    [["--host", "h", "--proto", "http"], '--proto "http" is not a protocol name'],
    [["--host", "h", "--proto", "lp"], "--event-type <schema>__<table> is required with --proto lp"],
    [["--host", "h", "--event-type", "calls"], "--event-type for SIP is call, registration or default"],
    [["--host", "h", "--format", "xml"], '--format "xml" is not one of'],
    [["--host", "h", "--format", "pcap"], "--format pcap needs --output"],
    [["--host", "h", "--format", "pcap", "-o", "-"], "not stdout"],
    [["--host", "h", "--format", "pcap", "-o", "f", "--proto", "rtcp"], "--format pcap is for SIP only"],
    [["--host", "h", "--pass", "x"], "--pass needs --user"],
    [["--host", "h", "--token-header", "Auth-Token"], "--token-header needs --token"],
    [["--host", "h", "--token", "t", "--token-header", "Auth Token"], "is not an HTTP header name"],
  ])("%p → usage error %p", (argv, message) => expect(usage(argv as string[])).toContain(message));

  test("pcap with --interactive is refused (rule 1)", () => {
    expect(usage(["--host", "h", "--format", "pcap", "-o", "f"], true)).toContain("--interactive");
  });

  test.each([
    ["TABLE", "table"],
    ["flow", "callflow"],
    ["ladder", "callflow"],
    ["pcap", "pcap"],
  ])("format %p → %p", (text, f) => expect(parseFormat(text)).toBe(f as "table"));
});

describe("the flag table", () => {
  test("every filter is a flag with help, and --live refuses the ones the stream cannot apply", () => {
    const help = SEARCH_HELP;
    for (const f of FILTERS) expect(help).toContain(`--${f.flag} <value>`);
    // The stream filters by method only: a status-code or CSeq filter with --live is an error, not ignored.
    for (const flag of ["response-code", "cseq-method", "call-id", "from", "sql"]) {
      expect(() =>
        liveOptions(
          parseArgs(["--host", "h:1", "--live", `--${flag}`, "x"], SEARCH_FLAGS).flags,
          new Set(["host", "live", flag]),
        ),
      ).toThrow(`--${flag} does not apply to --live`);
    }
    expect(
      liveOptions(
        parseArgs(["--host", "h:1", "--live", "--method", "bye"], SEARCH_FLAGS).flags,
        new Set(["host", "live", "method"]),
      ).query.get("method"),
    ).toBe("BYE");
  });

  test("the interactive form shows the labelled flags in the table's order", () => {
    expect(FORM_FIELDS.map((f) => f.key)).toEqual(SEARCH_FLAGS.filter((f) => f.label).map((f) => f.name));
    expect(FORM_FIELDS.find((f) => f.key === "pass")?.secret).toBe(true);
  });
});
