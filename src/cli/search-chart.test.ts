import { describe, expect, test } from "bun:test";
import { UsageError, parseArgs } from "./args.ts";
import { SEARCH_FLAGS, formFromFlags, searchOptions } from "./search-options.ts";

const NOW = Date.UTC(2024, 4, 1, 12);
const opts = (argv: string[], interactive = false) =>
  searchOptions(formFromFlags(parseArgs(["--host", "h:1", ...argv], SEARCH_FLAGS).flags), NOW, { interactive });
const usage = (argv: string[]) => {
  try {
    opts(argv);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
};

describe("svc search --format chart options", () => {
  test("defaults: no grouping, width chosen when the chart is fetched", () => {
    expect(opts(["--format", "chart"]).chart).toEqual({ groupBy: "none" });
  });

  test.each([
    [["--group-by", "method"], { groupBy: "method" }],
    [["--group-by", "STATUS"], { groupBy: "status_class" }],
    [["--group-by", "status_class", "--interval", "90m", "--from", "7d"], { groupBy: "status_class", interval: "90m" }],
    [["--interval", "60s"], { groupBy: "none", interval: "1m" }],
  ])("%p", (argv, chart) => {
    expect(opts(["--format", "chart", ...argv]).chart).toEqual(chart as never);
  });

  test.each([
    [
      ["--format", "chart", "--group-by", "caller"],
      '--group-by "caller" is not one of none, method, status (status_class)',
    ],
    [
      ["--format", "chart", "--interval", "5"],
      '--interval: "5" is not a width such as 30s, 5m, 1h or 1d (a whole number and s, m, h or d)',
    ],
    [
      ["--format", "chart", "--interval", "1s", "--from", "1d"],
      "--interval 1s gives 86400 buckets over --from..--to, at most 2000: choose a wider interval",
    ],
    [["--format", "table", "--group-by", "method"], "--group-by and --interval apply to --format chart only"],
    [["--interval", "5m"], "--group-by and --interval apply to --format chart only"],
  ])("%p → usage error", (argv, message) => {
    expect(usage(argv)).toBe(message);
  });

  test("the interactive form keeps them for when f cycles to the chart", () => {
    expect(opts(["--format", "table", "--group-by", "method"], true).chart).toEqual({ groupBy: "method" });
  });
});
