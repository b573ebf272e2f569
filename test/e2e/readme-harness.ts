/**
 * Helpers of readme-examples.test.ts: the commands of README.md's code blocks, and a `serve`
 * process (the executable or `npm start`) waited on until it listens and has printed the
 * first-run banner.
 */
import { readFileSync } from "node:fs";
import { waitFor } from "../harness.ts";

export interface ReadmeCommand {
  /** The line as written. */
  line: string;
  /** The line without its `# comment`, trimmed. */
  command: string;
}

/** A line without a trailing comment: `#` after whitespace and outside quotes starts one. */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i).trim();
    }
  }
  return line.trim();
}

/** The commands of every fenced shell block (sh, bash, shell or no language), block by block. */
export function readmeCommands(markdown: string): ReadmeCommand[][] {
  const blocks: ReadmeCommand[][] = [];
  for (const m of markdown.matchAll(/^```(sh|bash|shell|)\n([\s\S]*?)^```$/gm)) {
    const block = m[2]!
      .split("\n")
      .map((line) => ({ line: line.trimEnd(), command: stripComment(line) }))
      .filter((c) => c.command !== "");
    if (block.length) blocks.push(block);
  }
  return blocks;
}

export interface Served {
  /** host:port of the coordinator. */
  address: string;
  hepUdpPort: number;
  /** The first-run banner's values. */
  banner: { user: string; password: string; url: string };
  /** Everything written to stderr so far. */
  stderr(): string;
  /** SIGTERM to the process and every process it started; resolves when they are gone. */
  stop(): Promise<void>;
}

/** Child pids of `pid`, recursively (Linux /proc). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts `cmd` and waits for the coordinator's and HEP UDP's `listening` lines and the banner. */
export async function serveAndWait(cmd: string[], cwd: string, env: Record<string, string>): Promise<Served> {
  const proc = Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  let text = "";
  void (async () => {
    const dec = new TextDecoder();
    const reader = proc.stderr.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
  })();
  const json = () =>
    text.split("\n").flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const banner = (key: string) => new RegExp(`^ {3}${key}: +(\\S+)$`, "m").exec(text)?.[1];
  const stop = async () => {
    // npm does not pass SIGTERM on to the serve it started: stop the whole tree, deepest first.
    const pids = [...descendants(proc.pid).reverse(), proc.pid];
    for (const p of pids) if (alive(p)) process.kill(p, "SIGTERM");
    await waitFor(
      "the serve processes to exit",
      () => pids.every((p) => !alive(p) || p === proc.pid) && (proc.exitCode !== null || proc.signalCode !== null),
      30_000,
      50,
    );
  };
  try {
    await Promise.race([
      // The coordinator answers first; the lake and the HEP listeners start behind it, and "svc started"
      // says both phases ran (docs/ARCHITECTURE.md "Start-up").
      waitFor(
        "listening, started and the first-run banner",
        () =>
          json().some((l) => l.msg === "svc started") &&
          json().some((l) => l.msg === "listening" && l.module === "coordinator-http") &&
          banner("password"),
        60_000,
        50,
      ),
      proc.exited.then((c) => {
        throw new Error(`${cmd.join(" ")} exited ${c} before listening:\n${text}`);
      }),
    ]);
  } catch (e) {
    await stop();
    throw e;
  }
  const lines = json();
  const address = String(lines.find((l) => l.msg === "listening" && l.module === "coordinator-http")!.address);
  const udp = String(lines.find((l) => l.msg === "listening" && l.module === "hep-udp")?.address ?? ":0");
  return {
    address,
    hepUdpPort: Number(udp.split(":").pop()),
    banner: { user: banner("user") ?? "", password: banner("password")!, url: banner("URL") ?? "" },
    stderr: () => text,
    stop,
  };
}
