/**
 * What a command touches outside itself: output streams, environment, terminal and clock. main.ts
 * passes the real process; tests can pass their own.
 */
export interface CliIo {
  /** Resolves once the text is handed to the OS: main.ts exits right after, and a pipe would lose the rest. */
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
  env: Record<string, string | undefined>;
  /** stdout columns when it is a terminal. */
  columns?: number;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  now(): number;
}

export function processIo(): CliIo {
  return {
    out: (t) => writeAll(process.stdout, t),
    err: (t) => writeAll(process.stderr, t),
    env: process.env,
    ...(process.stdout.isTTY && process.stdout.columns ? { columns: process.stdout.columns } : {}),
    stdin: process.stdin,
    stdout: process.stdout,
    now: () => Date.now(),
  };
}

function writeAll(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  return new Promise((resolve, reject) => stream.write(text, (e) => (e ? reject(e) : resolve())));
}
