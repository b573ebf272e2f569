/**
 * User settings (spec doc 1 "Users and settings"): the transaction window (`transaction.range`,
 * ms offsets, shown in seconds) and the export defaults (`export.transaction` excludedCIDR).
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

const RANGE_KEYS: Array<[string, string]> = [
  ["from", "Messages before the first selected one"],
  ["to", "Messages after the last selected one"],
  ["message_from", "Look for the selected messages before the search range"],
  ["message_to", "Look for the selected messages after the search range"],
];
const DAY_S = 86_400;

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
  const init = Object.fromEntries(RANGE_KEYS.map(([k]) => [k, String(Math.round(Number(setting?.data[k] ?? (k.endsWith("from") ? -300_000 : 300_000)) / 1000))]));
  const [values, setValues] = useState<Record<string, string>>(init);
  const [error, setError] = useState<string | undefined>();
  const save = async (e: Event) => {
    e.preventDefault();
    const data: Record<string, number> = {};
    for (const [k] of RANGE_KEYS) {
      const s = Number(values[k]);
      const before = k.endsWith("from");
      if (!Number.isFinite(s) || (before ? s > 0 || s < -DAY_S : s < 0 || s > DAY_S)) {
        return setError(`${k}: ${before ? `between -${DAY_S} and 0` : `between 0 and ${DAY_S}`} seconds`);
      }
      data[k] = Math.round(s * 1000);
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
    <p class="muted span-all">When a call is opened, its selected messages are looked for in the search's time range widened by the two “look for” values, so a call found at the edge of a search is complete. Then messages are loaded from the first selected message plus “before” to the last one plus “after”; the same window bounds the search for correlated legs. Seconds, at most one day.</p>
    ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
    ${RANGE_KEYS.map(([k, label]) => html`<label key=${k}>${label} (s)<input inputmode="numeric" value=${values[k]} onInput=${(e: Event) => setValues({ ...values, [k]: inputValue(e) })} /></label>`)}
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
        .map((r) => (r.alias ? { alias: r.alias.trim(), disabled: r.disabled } : { ip: (r.ip ?? "").trim(), disabled: r.disabled }));
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
            <td><input class="mono" aria-label=${`Excluded address ${i + 1}`} value=${r.alias ?? r.ip ?? ""} onInput=${(e: Event) => {
              const v = inputValue(e);
              set(i, /^[0-9a-fA-F:.]+(\/\d+)?$/.test(v) || v === "" ? { ip: v, disabled: r.disabled } : { alias: v, disabled: r.disabled });
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
