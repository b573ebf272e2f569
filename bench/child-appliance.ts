/**
 * The real appliance as a child process for end-to-end benches: `svc serve` with `cfgPath`, the
 * bound address of each module read from its "listening" log line, error lines collected. Killed
 * when the bench process exits, whatever fails.
 */
const spawn = (cfgPath: string) =>
  Bun.spawn([process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], { stderr: "pipe", stdout: "ignore" });

export interface ChildAppliance {
  child: ReturnType<typeof spawn>;
  /** Module name → `host:port` from its "listening" line. */
  addresses: Record<string, string>;
  /** Port of a module (the last `:` part of its address). */
  port(module: string): number;
  errorLines: string[];
}

export async function startChildAppliance(
  cfgPath: string,
  waitFor: string[],
  timeoutMs = 30_000,
): Promise<ChildAppliance> {
  const child = spawn(cfgPath);
  process.on("exit", () => child.kill("SIGKILL"));
  const addresses: Record<string, string> = {};
  const errorLines: string[] = [];
  // Ready once it logs "svc started": the lake, ingest and relay open in the start's second phase,
  // after the ports listen (docs/ARCHITECTURE.md "Start-up").
  let started = false;
  void (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    const reader = child.stderr.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          const j = JSON.parse(line) as { msg?: string; module?: string; address?: string; level?: string };
          if (j.msg === "listening" && j.module && j.address) addresses[j.module] = j.address;
          if (j.msg === "svc started") started = true;
          if (j.level === "error") errorLines.push(line);
        } catch {
          /* not JSON */
        }
      }
    }
  })();
  const deadline = Date.now() + timeoutMs;
  while (!started || !waitFor.every((m) => addresses[m])) {
    if (Date.now() > deadline)
      throw new Error(
        `appliance did not start (waiting for ${[...waitFor.filter((m) => !addresses[m]), ...(started ? [] : ["svc started"])].join(", ")})`,
      );
    await Bun.sleep(50);
  }
  return { child, addresses, errorLines, port: (m) => Number(addresses[m]?.split(":").pop()) };
}
