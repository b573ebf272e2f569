import { afterEach, expect, test } from "bun:test";
import { configureLogging, createLogger, forwardingLogger, type LogLevel } from "./log.ts";

afterEach(() =>
  configureLogging({ level: "info", format: "json", sink: { write: (line) => process.stderr.write(line + "\n") } }),
);

test("createLogger: JSON lines with bound and call fields, Errors and bigints made JSON-safe, below the level dropped", () => {
  const lines: string[] = [];
  configureLogging({ level: "info", format: "json", sink: { write: (l) => lines.push(l) } });
  const log = createLogger({ module: "m" }).child({ table: "t" });
  log.debug("hidden");
  log.warn("seen", { error: new Error("boom"), rows: 3n });
  expect(lines).toHaveLength(1);
  const j = JSON.parse(lines[0]!);
  expect(j).toMatchObject({
    level: "warn",
    msg: "seen",
    module: "m",
    table: "t",
    rows: "3",
    error: { message: "boom", name: "Error" },
  });
});

test("forwardingLogger: the same filter and fields, handed to the forwarder (worker thread → main logger)", () => {
  const got: Array<[LogLevel, string, Record<string, unknown>]> = [];
  const log = forwardingLogger("warn", (level, msg, fields) => got.push([level, msg, fields]), { thread: "ingest" });
  log.info("dropped");
  log.child({ port: 9060 }).error("bind failed", { error: new Error("in use"), n: 1n });
  expect(got).toEqual([
    ["error", "bind failed", { thread: "ingest", port: 9060, error: { message: "in use", name: "Error" }, n: "1" }],
  ]);
});
