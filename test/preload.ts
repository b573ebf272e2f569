// Loaded before every test file (bunfig.toml). Pins what the environment could otherwise change:
// the time zone (dates print in UTC whatever the machine's zone) and colour (output compared as
// text; every child process a test starts inherits both). Keeps logs quiet unless SVC_TEST_LOG is
// set.
import { configureLogging } from "../src/core/index.ts";

process.env.TZ = "UTC";
process.env.NO_COLOR = "1";

configureLogging({
  level: (process.env.SVC_TEST_LOG as "debug" | "info" | "warn" | "error" | undefined) ?? "error",
  format: "json",
});
