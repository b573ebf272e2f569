/**
 * SIP Dialog Master (docs/GAMES.md "SIP Dialog Master"): a quiz on a real captured call. Recent
 * calls come from `POST /transactions/search` (the call search widget's API), one call's messages
 * from `POST /transactions/messages` (the ladder's); with no capture, textbook flows play offline.
 * Keys: 1-4 answer, Enter or N next question.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorText, post } from "../../lib/api.ts";
import { html } from "../../lib/html.ts";
import { serverFeatures } from "../../lib/state.ts";
import { PopoverPanel, usePopover } from "../../lib/popover.ts";
import type { TxMessage } from "../../lib/transaction.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { buildQuiz, NEW_SCORE, scoreAnswer, type Question, type Score } from "./quiz.ts";
import { parseStep, TEXTBOOK_FLOWS, type FlowStep } from "./sip-flow.ts";

interface RecentCall {
  sessionId: string;
  label: string;
  fromMs: number;
  toMs: number;
}

const DAY_MS = 86_400_000;
const textbookKey = (i: number) => `textbook:${i}`;

/** Newest INVITE of each call in the last 24 h (up to 20 calls). */
async function recentCalls(): Promise<RecentCall[]> {
  const now = Date.now();
  // A coordinator without a lake has no search: the textbook flows play (no request that can only 404).
  if (serverFeatures.get()?.search === false) return [];
  const r = await post<{ data: { items: Array<Record<string, unknown>> } }>("/transactions/search", {
    filter: { proto_type: 1, event_type: "call", method: "INVITE" },
    param: { limit: 200 },
    timestamp: { from: now - DAY_MS, to: now },
  });
  const out = new Map<string, RecentCall>();
  for (const row of r.data.items) {
    const id = typeof row.session_id === "string" ? row.session_id : "";
    if (!id || out.has(id)) continue;
    const from = String(row.from_user ?? row.caller ?? "?");
    const to = String(row.to_user ?? row.ruri_user ?? row.callee ?? "?");
    out.set(id, {
      sessionId: id,
      label: `${from} → ${to} · ${id.length > 28 ? `${id.slice(0, 27)}…` : id}`,
      fromMs: now - DAY_MS,
      toMs: now,
    });
    if (out.size >= 20) break;
  }
  return [...out.values()];
}

async function callSteps(c: RecentCall): Promise<FlowStep[]> {
  const r = await post<{ data: { items: TxMessage[] } }>("/transactions/messages", {
    session_id: [c.sessionId],
    proto_type: 1,
    event_type: "call",
    timestamp: { from: c.fromMs, to: c.toMs },
  });
  return r.data.items
    .filter((m) => (m.proto_type ?? 1) === 1 && m.payload)
    .sort((a, b) => a.timestamp_us - b.timestamp_us)
    .map((m) => parseStep(m.payload!, m.src_ip, m.dst_ip))
    .filter((s): s is FlowStep => s !== null);
}

type Load<T> = { state: "loading" } | { state: "error"; message: string } | { state: "done"; value: T };

export function SipDialogMaster({ widget }: WidgetProps) {
  const [calls, setCalls] = useState<Load<RecentCall[]>>({ state: "loading" });
  const [choice, setChoice] = useState<string>(textbookKey(0));
  const [steps, setSteps] = useState<Load<FlowStep[]>>({ state: "loading" });
  const [reload, setReload] = useState(0);
  const help = usePopover({ label: "How to play SIP Dialog Master" });

  useEffect(() => {
    setCalls({ state: "loading" });
    recentCalls().then(
      (list) => {
        setCalls({ state: "done", value: list });
        if (list.length > 0) setChoice(list[0]!.sessionId);
      },
      (e) => setCalls({ state: "error", message: errorText(e) }),
    );
  }, [reload]);

  useEffect(() => {
    // Wait for the recent calls: the newest one is chosen when there is one.
    if (calls.state === "loading") return;
    if (choice.startsWith("textbook:")) {
      const flow = TEXTBOOK_FLOWS[Number(choice.slice(9))] ?? TEXTBOOK_FLOWS[0]!;
      setSteps({ state: "done", value: flow.messages.map(([p, s, d]) => parseStep(p, s, d)!).filter(Boolean) });
      return;
    }
    const call = calls.state === "done" ? calls.value.find((c) => c.sessionId === choice) : undefined;
    if (!call) {
      // The call left the list (a reload found none): back to the first textbook flow.
      setChoice(textbookKey(0));
      return;
    }
    setSteps({ state: "loading" });
    // Only the answer for the call still chosen is shown (a quick change of choice drops the older one).
    let current = true;
    callSteps(call).then(
      (value) => current && setSteps({ state: "done", value }),
      (e) => current && setSteps({ state: "error", message: errorText(e) }),
    );
    return () => {
      current = false;
    };
  }, [choice, calls]);

  const selectId = `sdm-call-${widget.id}`;
  const list = calls.state === "done" ? calls.value : [];
  return html`<div style=${{ display: "flex", flexDirection: "column", height: "100%", padding: "6px 8px", gap: "6px", boxSizing: "border-box" }}>
    <div style=${{ display: "flex", gap: "6px", alignItems: "center", flexWrap: "wrap" }}>
      <label for=${selectId} class="small">Flow</label>
      <select id=${selectId} value=${choice} onChange=${(e: Event) => setChoice((e.target as HTMLSelectElement).value)} style=${{ flex: "1 1 160px", minWidth: 0 }}>
        ${list.map((c) => html`<option key=${c.sessionId} value=${c.sessionId}>${c.label}</option>`)}
        ${TEXTBOOK_FLOWS.map((f, i) => html`<option key=${i} value=${textbookKey(i)}>${f.name}</option>`)}
      </select>
      <button type="button" class="btn btn-ghost" onClick=${() => setReload((n) => n + 1)}>Reload calls</button>
      <button type="button" class="btn btn-ghost" ...${help.trigger}>How to play</button>
      <${PopoverPanel} pop=${help}>
        <div class="small" style=${{ maxWidth: "320px" }}>
          <p>The ladder shows a call message by message. Answer what must come next, which values identify the dialog, or which CSeq a request carries.</p>
          <p>Keys: 1-4 pick an answer, Enter or N goes on. 10 points a right answer, +5 per answer in a streak (up to +15).</p>
          <p>Explanations cite RFC 3261 (SIP) and RFC 3262 (reliable provisional responses).</p>
        </div>
      <//>
    </div>
    ${calls.state === "loading" && html`<p class="loading small" role="status" style=${{ margin: 0 }}>Loading recent calls…</p>`}
    ${calls.state === "error" && html`<p class="alert alert-error small" role="alert" style=${{ margin: 0 }}>Recent calls could not be loaded: ${calls.message}. The textbook flows still play.</p>`}
    ${
      calls.state === "done" &&
      list.length === 0 &&
      html`<p class="muted small" role="status" style=${{ margin: 0 }}>No SIP calls captured in the last 24 hours. Send HEP from your SBC, proxy or capture agent (heplify, Kamailio siptrace, sngrep) to UDP/TCP port 9060, or import a PCAP, then Reload calls. Meanwhile, play a textbook flow.</p>`
    }
    ${steps.state === "loading" && calls.state !== "loading" && html`<p class="loading" role="status">Loading the call…</p>`}
    ${steps.state === "error" && html`<p class="alert alert-error" role="alert">The call could not be loaded: ${steps.message}</p>`}
    ${steps.state === "done" && html`<${Quiz} key=${choice} steps=${steps.value} seed=${choice.length + reload} />`}
  </div>`;
}

function Quiz({ steps, seed }: { steps: FlowStep[]; seed: number }) {
  const questions = useMemo(() => buildQuiz(steps, seed), [steps, seed]);
  const [index, setIndex] = useState(0);
  const [picked, setPicked] = useState<string | null>(null);
  const [score, setScore] = useState<Score>(NEW_SCORE);
  const root = useRef<HTMLDivElement>(null);
  const q: Question | undefined = questions[index];
  const shown = q ? (picked ? q.reveal : q.shown) : steps.length;

  const answer = (c: string) => {
    if (!q || picked) return;
    setPicked(c);
    setScore((s) => scoreAnswer(s, c === q.answer));
  };
  const next = () => {
    setPicked(null);
    setIndex((i) => i + 1);
  };
  const restart = () => {
    setPicked(null);
    setIndex(0);
    setScore(NEW_SCORE);
  };
  const onKey = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).tagName === "SELECT") return;
    const n = Number(e.key);
    if (q && !picked && n >= 1 && n <= q.choices.length) {
      e.preventDefault();
      answer(q.choices[n - 1]!);
    } else if (picked && (e.key === "Enter" || e.key.toLowerCase() === "n")) {
      e.preventDefault();
      next();
    }
  };
  // Keep the keys working: after an answer focus goes to Next, after Next to the first answer (never on first show).
  const acted = useRef(false);
  useEffect(() => {
    if (picked) root.current?.querySelector<HTMLButtonElement>("[data-next]")?.focus();
    else if (acted.current)
      root.current?.querySelector<HTMLButtonElement>('[role="group"] button, [data-again]')?.focus();
    acted.current = true;
  }, [picked, index]);

  const ladder = useRef<HTMLElement>(null);
  // Below 480 px (a phone, the dashboard's narrow layout) the ladder goes above the question.
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const el = root.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(() => setNarrow(el.clientWidth < 480));
    ro.observe(el);
    return () => ro.disconnect();
  }, [steps.length === 0]);
  // A message's headers, opened from the ladder (Esc or Back returns to the list).
  const [open, setOpen] = useState<number | null>(null);
  const lastOpen = useRef<number | null>(null);
  const closeHeaders = () => setOpen(null);
  useEffect(() => {
    if (open !== null) {
      lastOpen.current = open;
      ladder.current?.querySelector<HTMLElement>("[data-back]")?.focus();
    } else if (lastOpen.current !== null) {
      ladder.current?.querySelectorAll<HTMLElement>("ol button")[lastOpen.current]?.focus();
      lastOpen.current = null;
    }
  }, [open]);
  // The newest message of the ladder stays in view.
  useEffect(() => {
    const el = ladder.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [shown]);

  if (steps.length === 0)
    return html`<p class="muted" role="status">This call has no SIP messages to play. Choose another flow.</p>`;
  const hosts = [...new Set(steps.flatMap((s) => [s.src, s.dst]))];
  const letter = (ip: string) => String.fromCharCode(65 + hosts.indexOf(ip));
  const right = picked !== null && q !== undefined && picked === q.answer;
  return html`<p role="status" aria-label="Score" class="small" style=${{ margin: 0 }}>
      Score <b>${score.points}</b> · ${score.correct}/${score.answered} right${score.streak > 1 ? ` · streak ${score.streak}` : ""}${q ? ` · question ${index + 1} of ${questions.length}` : ""}
    </p>
    <div ref=${root} onKeyDown=${onKey} style=${{ display: "grid", ...(narrow ? { gridTemplateRows: "minmax(0, 1fr) minmax(0, 2fr)" } : { gridTemplateColumns: "minmax(0, 1fr) minmax(0, 1.3fr)" }), gap: "8px", flex: "1", minHeight: 0 }}>
    <section ref=${ladder} aria-label="Call so far" style=${{ overflow: "auto", minHeight: 0, ...(narrow ? { borderBottom: "1px solid var(--line)" } : { borderRight: "1px solid var(--line)", paddingRight: "6px" }) }}>
      ${
        open !== null && steps[open]
          ? html`<div role="dialog" aria-label=${`Headers of message ${open + 1}`} onKeyDown=${(e: KeyboardEvent) => {
              if (e.key === "Escape") {
                e.stopPropagation();
                closeHeaders();
              }
            }}>
            <button type="button" class="btn btn-ghost" data-back onClick=${closeHeaders}>← Back to the call</button>
            <p class="small" style=${{ margin: "4px 0" }}><b>${open + 1}. ${steps[open].label}</b> ${steps[open].src} → ${steps[open].dst}</p>
            <ul class="small mono" aria-label="Headers" style=${{ margin: 0, paddingLeft: "14px" }}>
              ${steps[open].headers.map((h, k) => html`<li key=${k} style=${{ overflowWrap: "anywhere" }}>${h}</li>`)}
            </ul>
          </div>`
          : html`<p class="small muted" style=${{ margin: "0 0 4px", overflowWrap: "anywhere" }}>${hosts.map((h) => `${letter(h)} ${h}`).join(" · ")}</p>
            <ol class="small mono" aria-label="Messages shown" style=${{ margin: 0, padding: 0, listStyle: "none" }}>
              ${steps.slice(0, shown).map(
                (
                  s,
                  i,
                ) => html`<li key=${i}><button type="button" title="Show the headers" aria-label=${`${i + 1}. ${letter(s.src)} to ${letter(s.dst)} ${s.label}, CSeq ${s.cseqNum} ${s.cseqMethod}: show the headers`}
                  onClick=${() => setOpen(i)} style=${{ textAlign: "left", overflowWrap: "anywhere", font: "inherit", padding: 0, background: "none", border: 0, cursor: "pointer", color: "inherit" }}>${i + 1}. ${letter(s.src)}→${letter(s.dst)} <b>${s.label}</b> <span class="muted">CSeq ${s.cseqNum} ${s.cseqMethod}</span></button></li>`,
              )}
            </ol>`
      }
    </section>
    <section aria-label="Question" style=${{ overflow: "auto", minHeight: 0 }}>
      ${
        q
          ? html`<p style=${{ margin: "0 0 6px", fontWeight: 600, overflowWrap: "anywhere" }}>${q.prompt}</p>
            <div role="group" aria-label="Answers" style=${{ display: "flex", flexDirection: "column", gap: "4px" }}>
              ${q.choices
                .map((c, i) => [c, i] as const)
                .filter(([c]) => !picked || c === picked || c === q.answer)
                .map(
                  ([
                    c,
                    i,
                  ]) => html`<button key=${c} type="button" class=${picked && c === q.answer ? "btn btn-primary" : "btn"} disabled=${picked !== null} onClick=${() => answer(c)}
                  aria-label=${`${i + 1}. ${c}`} style=${{ textAlign: "left", whiteSpace: "normal", overflowWrap: "anywhere", height: "auto" }}>${i + 1}. ${c}${picked && c === q.answer ? " ✓" : picked === c ? " ✗" : ""}</button>`,
                )}
            </div>
            ${
              picked &&
              html`<div role="alert" class=${right ? "alert" : "alert alert-warn"} style=${{ marginTop: "6px", fontSize: "12px" }}>
              <b>${right ? "Right." : `Not quite: ${q.answer}.`}</b> ${q.why}
              <div style=${{ marginTop: "4px" }}><button type="button" class="btn btn-primary" data-next onClick=${next}>${index + 1 < questions.length ? "Next question" : "Finish"}</button></div>
            </div>`
            }`
          : html`<p role="status">${questions.length === 0 ? "No rule-bound step in this call to ask about: choose another flow." : `Round complete: ${score.points} points, ${score.correct} of ${score.answered} right.`}</p>
            <button type="button" class="btn btn-primary" data-again onClick=${restart}>Play again</button>`
      }
    </section>
  </div>`;
}
