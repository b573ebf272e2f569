/**
 * One listener thread of the shared-slots tests (hep-shared-slots.test.ts): a real Worker that
 * opens a HEP stream listener over the shared state it is posted, then answers `counts` (or says why it could not start).
 */
import { configureLogging } from "../../src/core/index.ts";
import { startThreadListener, type ThreadListenerInit } from "./hep-shared-slots-helpers.ts";

declare const self: Worker;
configureLogging({ level: "error", format: "json" });

let listener: Awaited<ReturnType<typeof startThreadListener>> | undefined;

self.onmessage = async (e: MessageEvent<{ type: "start"; init: ThreadListenerInit } | { type: "counts" }>) => {
  if (e.data.type === "start") {
    try {
      listener = await startThreadListener(e.data.init);
      postMessage({ type: "started", port: listener.port });
    } catch (err) {
      postMessage({ type: "failed", message: String(err) });
    }
  } else postMessage({ type: "counts", counts: listener?.counts() });
};
