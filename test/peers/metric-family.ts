/** One family of a Prometheus text exposition as label text → value, e.g. `thread="1"` → 312. */
export function metricFamily(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of text.split("\n")) {
    if (!l.startsWith(`${name}{`)) continue;
    out.set(l.slice(name.length + 1, l.indexOf("}")), Number(l.slice(l.lastIndexOf(" ") + 1)));
  }
  return out;
}
