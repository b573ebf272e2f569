// Loaded before every test file (bunfig.toml). Keeps logs quiet unless SVC_TEST_LOG is set.
import { configureLogging } from "../src/core/index.ts";

configureLogging({ level: (process.env.SVC_TEST_LOG as "debug" | "info" | "warn" | "error" | undefined) ?? "error", format: "json" });
