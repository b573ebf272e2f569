/**
 * User settings (docs/API.md "Users and settings"): the transaction window (`transaction.range`,
 * signed ms offsets in the API, shown as minutes before / after; docs/UI.md "Settings") and the
 * export defaults (`export.transaction` excludedCIDR).
 */
import { useState } from "preact/hooks";
import { errorText, get, put } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import type { Me, Setting } from "../lib/types.ts";
import { LoadState, Page, checked, inputValue, useLoad } from "./common.ts";

interface Exclusion {
  ip?: string;
  alias?: string;
  disabled: boolean;
}

/** The four members of transaction.range: `from`/`message_from` are before (≤ 0 ms), the others after. */
const RANGE_KEYS: Array<[string, string]> = [
  ["from", "Before the first selected message"],
  ["to", "After the last selected message"],
  ["message_from", "Look before the search range"],
  ["message_to", "Look after the search range"],
];
const DAY_MIN = 1440;
const MIN_MS = 60_000;
/** Minutes as typed and shown: whole or up to two decimals (90 s = 1.5). */
const minutesText = (ms: number) => String(Math.round((Math.abs(ms) / MIN_MS) * 100) / 100);
const isBefore = (k: string) => k.endsWith("from");
/** "5 min before / 5 min after" of two minute fields as typed. */
const windowText = (before: string, after: string) =>
  `${before.trim() || "?"} min before / ${after.trim() || "?"} min after`;

export function SettingsPage({ me }: { me: Me }) {
  const settings = useLoad(() => get<{ data: { items: Setting[] } }>("/me/settings").then((r) => r.data.items));
  return html`<${Page} title="Settings" intro=${`Personal settings of ${me.username}.`}>
    <${LoadState} what="Settings" error=${settings.error} loading=${!settings.data} />
    ${
      settings.data &&
      html`<div class="cards">
      <${RangeForm} setting=${settings.data.find((s) => s.category === "transaction" && s.param === "range")} />
      <${ExportForm} setting=${settings.data.find((s) => s.category === "export" && s.param === "transaction")} />
    </div>`
    }
  <//>`;
}

function RangeForm({ setting }: { setting: Setting | undefined }) {
  const init = Object.fromEntries(
    RANGE_KEYS.map(([k]) => [k, minutesText(Number(setting?.data[k] ?? (isBefore(k) ? -300_000 : 300_000)))]),
  );
  const [values, setValues] = useState<Record<string, string>>(init);
  const [error, setError] = useState<string | undefined>();
  const save = async (e: Event) => {
    e.preventDefault();
    const data: Record<string, number> = {};
    for (const [k, label] of RANGE_KEYS) {
      const text = (values[k] ?? "").trim();
      const m = Number(text);
      if (text === "" || !Number.isFinite(m) || m < 0 || m > DAY_MIN)
        return setError(`${label}: minutes from 0 to ${DAY_MIN} (one day)`);
      // The API keeps signed milliseconds: before is negative (docs/UI.md "Settings").
      const ms = Math.round(m * MIN_MS);
      data[k] = isBefore(k) ? -ms : ms;
    }
    setError(undefined);
    try {
      await put("/me/settings/transaction", { param: "range", data });
      notify("Transaction window saved");
    } catch (err) {
      setError(errorText(err));
    }
  };
  return html`<form class="card form-grid" onSubmit=${save} aria-label="Transaction window">
    <h2>Transaction window</h2>
    <p class="muted span-all">When a call is opened, its selected messages are looked for in the search's time range widened by the two “look” values, so a call found at the edge of a search is complete. Then messages are loaded from the first selected message minus “before” to the last one plus “after”; the same window bounds the search for correlated legs. Minutes, at most one day.</p>
    <p class="span-all" role="status">Messages: <strong>${windowText(values.from ?? "", values.to ?? "")}</strong> the selected ones · search range widened <strong>${windowText(values.message_from ?? "", values.message_to ?? "")}</strong></p>
    ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
    ${RANGE_KEYS.map(
      ([k, label]) =>
        html`<label key=${k}>${label} (min)<input inputmode="decimal" value=${values[k]} onInput=${(e: Event) => setValues({ ...values, [k]: inputValue(e) })} /></label>`,
    )}
    <div class="form-actions span-all"><button type="submit" class="btn btn-primary">Save window</button></div>
  </form>`;
}

function ExportForm({ setting }: { setting: Setting | undefined }) {
  const initial = Array.isArray(setting?.data.excludedCIDR) ? (setting.data.excludedCIDR as Exclusion[]) : [];
  const [rows, setRows] = useState<Exclusion[]>(initial);
  const [error, setError] = useState<string | undefined>();
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const clean = rows
        .filter((r) => (r.ip ?? r.alias ?? "").trim() !== "")
        .map((r) =>
          r.alias ? { alias: r.alias.trim(), disabled: r.disabled } : { ip: (r.ip ?? "").trim(), disabled: r.disabled },
        );
      await put("/me/settings/export", { param: "transaction", data: { excludedCIDR: clean } });
      setError(undefined);
      notify("Export defaults saved");
    } catch (err) {
      setError(errorText(err));
    }
  };
  const set = (i: number, r: Exclusion) => setRows(rows.map((x, j) => (j === i ? r : x)));
  return html`<form class="card" onSubmit=${save} aria-label="Export defaults">
    <h2>Export defaults</h2>
    <p class="muted">Addresses, networks (CIDR) or alias names left out of PCAP and text exports by default, e.g. a monitoring probe.</p>
    ${error && html`<p class="alert alert-error" role="alert">${error}</p>`}
    <table class="grid-table" aria-label="Excluded addresses">
      <thead><tr><th scope="col">Address, CIDR or alias</th><th scope="col">Enabled</th><th scope="col"><span class="sr-only">Remove</span></th></tr></thead>
      <tbody>
        ${rows.map(
          (r, i) => html`<tr key=${i}>
            <td><input class="mono" aria-label=${`Excluded address ${i + 1}`} value=${r.alias ?? r.ip ?? ""} onInput=${(
              e: Event,
            ) => {
              const v = inputValue(e);
              set(
                i,
                /^[0-9a-fA-F:.]+(\/\d+)?$/.test(v) || v === ""
                  ? { ip: v, disabled: r.disabled }
                  : { alias: v, disabled: r.disabled },
              );
            }} /></td>
            <td><input type="checkbox" aria-label=${`Exclusion ${i + 1} enabled`} checked=${!r.disabled} onChange=${(e: Event) => set(i, { ...r, disabled: !checked(e) })} /></td>
            <td><button type="button" class="btn btn-ghost btn-danger" onClick=${() => setRows(rows.filter((_x, j) => j !== i))}>Remove</button></td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${rows.length === 0 && html`<p class="muted">Nothing is excluded.</p>`}
    <div class="form-actions">
      <button type="button" class="btn btn-ghost" onClick=${() => setRows([...rows, { ip: "", disabled: false }])}>Add address</button>
      <button type="submit" class="btn btn-primary">Save export defaults</button>
    </div>
  </form>`;
}
