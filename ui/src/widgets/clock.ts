/** Clock widget: local time and UTC, so capture times (UTC) and wall clocks can be compared. */
import { useEffect, useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import type { WidgetProps } from "./types.ts";

const pad = (n: number) => String(n).padStart(2, "0");

export function Clock({ widget }: WidgetProps) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const d = new Date(now);
  const utc = widget.config?.timezone === "utc";
  const h = utc ? d.getUTCHours() : d.getHours();
  const m = utc ? d.getUTCMinutes() : d.getMinutes();
  const s = utc ? d.getUTCSeconds() : d.getSeconds();
  const tz = utc ? "UTC" : (Intl.DateTimeFormat().resolvedOptions().timeZone ?? "local");
  return html`<div class="clock">
    <time class="clock-time" datetime=${d.toISOString()}>${pad(h)}:${pad(m)}<span class="clock-sec">:${pad(s)}</span></time>
    <div class="clock-date">${d.toLocaleDateString(undefined, { weekday: "long", year: "numeric", month: "long", day: "numeric", ...(utc ? { timeZone: "UTC" } : {}) })}</div>
    <div class="clock-tz">${tz} · UTC ${d.toISOString().slice(11, 19)}</div>
  </div>`;
}
