/**
 * A coordinator-only process (storage.lakehouse.enable false) with the line-protocol and OTLP
 * receivers switched on starts without their listeners and says so once each
 * (docs/OPERATIONS.md "Keys accepted with a warning").
 */
import { describe, expect, test } from "bun:test";
import { configureLogging } from "../../src/core/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

describe("coordinator-only process", () => {
  test("line protocol and OTLP on: the process starts without their listeners, one warning each", async () => {
    const lines: Array<Record<string, unknown>> = [];
    configureLogging({
      level: "warn",
      format: "json",
      sink: { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) },
    });
    try {
      await using dir = tempDir();
      await using a = await startTestAppliance(dir.path, {
        storage: { lakehouse: { enable: false } },
        ingest: { line_protocol: { enable: true }, otlp: { enable: true } },
      });
      expect(a.app.lineProtocol).toBeUndefined();
      expect(a.app.otlp).toBeUndefined();
      const res = await fetch(`${a.app.coordinatorUrl}/health`);
      expect(res.status).toBeLessThan(500);
      const warned = lines.filter((l) => l.level === "warn").map((l) => String(l.msg));
      expect(warned.filter((m) => m.startsWith("ingest.line_protocol.enable: no line-protocol listener")).length).toBe(
        1,
      );
      expect(warned.filter((m) => m.startsWith("ingest.otlp.enable: no OTLP listener")).length).toBe(1);
    } finally {
      configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
    }
  });
});
