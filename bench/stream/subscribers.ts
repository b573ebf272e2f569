/**
 * Live-stream subscribers for bench/stream/run.ts, in their own process so their CPU is not the
 * appliance's: N WebSockets on a /stream URL, counting frames and bytes. Prints `ready` once all
 * are open, and one JSON line {frames, bytes, per_subscriber, closed} when stdin closes.
 *   bun bench/stream/subscribers.ts --url ws://127.0.0.1:8081/stream?proto=1 --count 10
 */
export {};

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const url = args.get("url") ?? "ws://127.0.0.1:8081/stream";
const count = Number(args.get("count") ?? "10");

const frames = new Array<number>(count).fill(0);
let bytes = 0;
let closed = 0;
const sockets = Array.from({ length: count }, (_, i) => {
  const ws = new WebSocket(url);
  ws.onmessage = (e: MessageEvent) => {
    frames[i]!++;
    bytes += String(e.data).length;
  };
  ws.onclose = () => closed++;
  return new Promise<WebSocket>((resolve, reject) => {
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error(`subscriber ${i} did not open`));
  });
});
const open = await Promise.all(sockets);
console.log("ready");
// Runs until the parent closes stdin.
const stdin = Bun.stdin.stream().getReader();
while (!(await stdin.read()).done) {
  /* nothing to read: stdin only says when to stop */
}
for (const ws of open) ws.close(1000, "bench done");
console.log(JSON.stringify({ frames: frames.reduce((a, b) => a + b, 0), bytes, per_subscriber: frames, closed }));
