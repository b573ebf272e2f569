/**
 * Line-protocol parse throughput on one core: a telegraf-like body (cpu, mem and disk lines with
 * 3-6 tags and 7-10 fields, nanosecond timestamps), parsed whole, as a string and as the raw bytes a
 * receiver gets (bytes include the strict UTF-8 decode). Run: ./node_modules/.bin/bun bench/lineproto-parse.ts
 * Optional arguments: seconds per measurement (default 3), lines per body (default 10000).
 */
import { parseLineProtocol } from "../src/ingest/lineproto/index.ts";
import { seeded } from "../test/fixtures/seeded.ts";

const seconds = Number(process.argv[2] ?? 3);
const linesPerBody = Number(process.argv[3] ?? 10_000);

// Deterministic pseudo-random numbers so every run parses the same body.
const rnd = seeded(42);
const pct = () => (rnd() * 100).toFixed(rnd() < 0.5 ? 2 : 12);
const big = () => Math.floor(rnd() * 2 ** 40);

function telegrafBody(lines: number): string {
  const out: string[] = [];
  let ts = 1_700_000_000_000_000_000n;
  for (let i = 0; i < lines; i++) {
    const host = `web-${String(i % 50).padStart(2, "0")}.dc1.example.com`;
    ts += 1_000_000n;
    switch (i % 3) {
      case 0:
        out.push(
          `cpu,cpu=cpu${i % 8},host=${host},dc=eu-west-1,rack=r${i % 12} ` +
            `usage_user=${pct()},usage_system=${pct()},usage_idle=${pct()},usage_nice=0,usage_iowait=${pct()},` +
            `usage_irq=0,usage_softirq=${pct()},usage_steal=0,usage_guest=0,usage_guest_nice=0 ${ts}`,
        );
        break;
      case 1:
        out.push(
          `mem,host=${host},dc=eu-west-1,region=eu ` +
            `total=${big()}i,available=${big()}i,used=${big()}i,free=${big()}i,cached=${big()}i,buffered=${big()}i,` +
            `used_percent=${pct()},available_percent=${pct()} ${ts}`,
        );
        break;
      default:
        out.push(
          `disk,device=nvme0n1p${i % 4},fstype=ext4,host=${host},mode=rw,path=/var/lib/data\\ ${i % 4},dc=eu-west-1 ` +
            `free=${big()}i,total=${big()}i,used=${big()}i,used_percent=${pct()},inodes_free=${big()}i,inodes_total=${big()}i,inodes_used=${big()}i ${ts}`,
        );
    }
  }
  return `${out.join("\n")}\n`;
}

const text = telegrafBody(linesPerBody);
const bytes = new TextEncoder().encode(text);
const check = parseLineProtocol(text, { precision: "ns" });
if (check.errors.length > 0 || check.points.length !== linesPerBody) {
  throw new Error(`bench body does not parse cleanly: ${JSON.stringify(check.errors.slice(0, 3))}`);
}
const fields = check.points.reduce((n, p) => n + p.fields.length, 0);
console.log(
  `body: ${linesPerBody} lines, ${(bytes.length / 1e6).toFixed(2)} MB, ${(fields / linesPerBody).toFixed(1)} fields/line, Bun ${Bun.version}`,
);

/** Wall-clock rate, plus the rate per CPU-second (less sensitive to a busy shared machine). */
function measure(label: string, run: () => number): void {
  for (let i = 0; i < 5; i++) run(); // warm-up so the JIT has compiled the parser
  let points = 0;
  let bodies = 0;
  const cpu0 = process.cpuUsage();
  const start = Bun.nanoseconds();
  const deadline = start + seconds * 1e9;
  while (Bun.nanoseconds() < deadline) {
    points += run();
    bodies++;
  }
  const elapsed = (Bun.nanoseconds() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const mbps = (bodies * bytes.length) / 1e6 / elapsed;
  const rate = (x: number) => Math.round(x).toLocaleString("en-US");
  console.log(
    `${label}: ${rate(points / elapsed)} points/s wall, ${rate(points / cpuSeconds)} points/CPU-s, ${mbps.toFixed(1)} MB/s (${((elapsed / points) * 1e9).toFixed(0)} ns/point)`,
  );
}

measure("parse string body", () => parseLineProtocol(text, { precision: "ns" }).points.length);
measure("parse bytes body  ", () => parseLineProtocol(bytes, { precision: "ns" }).points.length);
