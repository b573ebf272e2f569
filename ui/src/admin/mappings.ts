/**
 * Mappings editor (docs/API.md "Mapping rows", "Field object"): the protocol field lists that drive
 * the search forms, edited as JSON. Syntax errors and the server's validation errors
 * (`fields_mapping.3.selector: required ...`) are shown at their line in the editor.
 */
import type { Static } from "@sinclair/typebox";
import { useRef, useState } from "preact/hooks";
import type { MappingSchema } from "../../../src/api/mappings/model.ts";
import { ApiError, errorText, get, put, type ListBody } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { lineOfPath, pathOfMessage, syntaxErrorLine } from "../lib/json-lines.ts";
import { notify } from "../lib/state.ts";
import type { Me } from "../lib/types.ts";
import { LoadState, Page, useLoad } from "./common.ts";

/** A row of `GET /mappings`: the route's own schema (a type-only import). */
type Mapping = Static<typeof MappingSchema>;

const editable = (m: Mapping) => ({
  hepid: m.hepid,
  profile: m.profile,
  hep_alias: m.hep_alias,
  fields_mapping: m.fields_mapping,
  fields_settings: m.fields_settings,
  schema_mapping: m.schema_mapping,
  mapping_settings: m.mapping_settings,
  retention: m.retention,
  partition_step: m.partition_step,
});

export function MappingsPage({ me }: { me: Me }) {
  const list = useLoad(() => get<ListBody<Mapping>>("/mappings?sort=hepid&page[limit]=1000").then((r) => r.data.items));
  const [current, setCurrent] = useState<Mapping | null>(null);
  return html`<${Page} title="Mappings" intro="Fields of each protocol and profile: they build the search forms. Built-in rows come back as shipped when deleted and the service restarts.">
    <${LoadState} what="Mappings" error=${list.error} loading=${!list.data} />
    ${
      list.data &&
      html`<div class="master-detail">
      <table class="grid-table admin-table" aria-label="Mappings">
        <thead><tr><th scope="col">HEP</th><th scope="col">Profile</th><th scope="col">Alias</th><th scope="col">Fields</th><th scope="col">Source</th></tr></thead>
        <tbody>
          ${list.data.map(
            (m) => html`<tr
              key=${m.id}
              tabindex="0"
              class=${current?.id === m.id ? "selected" : ""}
              aria-selected=${current?.id === m.id ? "true" : "false"}
              onClick=${() => setCurrent(m)}
              onKeyDown=${(e: KeyboardEvent) => (e.key === "Enter" || e.key === " ") && ((e.preventDefault(), setCurrent(m)))}
            >
              <td class="mono">${m.hepid}</td><td class="mono">${m.profile}</td><td>${m.hep_alias}</td><td>${m.fields_mapping.length}</td><td><span class="tag">${m.source}</span></td>
            </tr>`,
          )}
        </tbody>
      </table>
      ${
        current
          ? html`<${MappingEditor} key=${current.id} mapping=${current} canEdit=${me.is_admin} onSaved=${() => list.reload()} />`
          : html`<div class="empty side"><p>Select a mapping to read or edit its fields.</p></div>`
      }
    </div>`
    }
  <//>`;
}

function MappingEditor({ mapping, canEdit, onSaved }: { mapping: Mapping; canEdit: boolean; onSaved: () => void }) {
  const [text, setText] = useState(JSON.stringify(editable(mapping), null, 2));
  const [problem, setProblem] = useState<{ line: number | undefined; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = text.split("\n").length;

  const showAt = (line: number | undefined, message: string) => {
    setProblem({ line, message });
    const ta = area.current;
    if (ta && line !== undefined) {
      const offset =
        text
          .split("\n")
          .slice(0, line - 1)
          .join("\n").length + (line > 1 ? 1 : 0);
      ta.focus();
      ta.setSelectionRange(offset, offset);
      ta.scrollTop = Math.max(0, (line - 5) * 18);
    }
  };
  const save = async (e: Event) => {
    e.preventDefault();
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      return showAt(syntaxErrorLine(text), `Not valid JSON: ${errorText(err)}`);
    }
    setBusy(true);
    try {
      await put(`/mappings/${mapping.id}`, doc);
      setProblem(null);
      notify(`Mapping ${mapping.hepid}/${mapping.profile} saved`);
      onSaved();
    } catch (err) {
      const msg = errorText(err);
      const path = err instanceof ApiError && err.fields[0] ? pathOfMessage(`${err.fields[0]}:`) : pathOfMessage(msg);
      showAt(path ? lineOfPath(text, path) : undefined, msg);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card editor" onSubmit=${save} aria-label=${`Mapping ${mapping.hepid} ${mapping.profile}`}>
    <header class="editor-head">
      <h2>${mapping.hep_alias} <span class="muted mono">${mapping.hepid}/${mapping.profile}</span></h2>
      <span class="spacer"></span>
      ${
        canEdit
          ? html`<button type="button" class="btn btn-ghost" onClick=${() => {
              setText(JSON.stringify(editable(mapping), null, 2));
              setProblem(null);
            }}>Revert</button>
            <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? "Saving…" : "Save mapping"}</button>`
          : html`<span class="muted">Read only: administrators edit mappings</span>`
      }
    </header>
    ${problem && html`<p class="alert alert-error" role="alert" id="mapping-error">${problem.line !== undefined ? html`<strong>Line ${problem.line}:</strong> ` : ""}${problem.message}</p>`}
    <div class="code-edit">
      <div class="gutter" aria-hidden="true" ref=${gutter}>${Array.from({ length: lines }, (_x, i) => html`<span key=${i} class=${problem?.line === i + 1 ? "ln bad" : "ln"}>${i + 1}</span>`)}</div>
      <textarea
        ref=${area}
        class="mono"
        spellcheck=${false}
        aria-label="Mapping JSON"
        aria-invalid=${problem ? "true" : "false"}
        aria-describedby=${problem ? "mapping-error" : undefined}
        readonly=${!canEdit}
        value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        onScroll=${(e: Event) => {
          if (gutter.current) gutter.current.scrollTop = (e.target as HTMLTextAreaElement).scrollTop;
        }}
      ></textarea>
    </div>
  </form>`;
}
