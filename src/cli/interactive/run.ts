import { errorMessage } from "../../core/index.ts";
import { UsageError } from "../args.ts";
import { coordinatorClient } from "../coordinator-client.ts";
import type { CliIo } from "../io.ts";
import { fetchRows, type FetchedRows } from "../search-fetch.ts";
import { searchOptions, type SearchForm, type SearchOptions } from "../search-options.ts";
import { fetchChart } from "../search-chart.ts";
import { countLine, readableColumns, renderOutput } from "../search-output.ts";
import { fetchCallMessages } from "../search-pcap.ts";
import { buildCallFlow, renderCallFlow } from "../views/callflow.ts";
import { renderChart, type ChartData } from "../views/chart.ts";
import { parseKeys } from "./keys.ts";
import { callFrame, formFrame, resultsFrame, resultsPage, screenLines } from "./screen.ts";
import { handleKey, initialState, type UiState } from "./state.ts";

/**
 * `svc search --interactive`: the state machine of state.ts driven by raw-mode key presses, drawn
 * on the alternate screen. The terminal is always restored (raw mode off, cursor shown, main
 * screen back) however the loop ends. `--debug` output is not shown here: it would tear the screen.
 */
const ALT_ON = "\x1b[?1049h\x1b[?25l";
const ALT_OFF = "\x1b[?25h\x1b[?1049l";

export async function runInteractive(form: SearchForm, io: CliIo, _debug: boolean): Promise<number> {
  const { stdin, stdout } = io;
  if (!stdin.isTTY || !stdout.isTTY) throw new UsageError("--interactive needs a terminal on stdin and stdout");
  let state: UiState = initialState(form);
  let fetched: FetchedRows | undefined;
  let fields: string[] | undefined;
  let result: string[] = [];
  let title = "";
  let callLines: string[] = [];
  let callTitle = "";
  const size = () => ({ w: Math.max(20, stdout.columns || 80), h: Math.max(5, stdout.rows || 24) });

  const draw = () => {
    const { w, h } = size();
    const frame =
      state.mode === "form"
        ? formFrame(state, w, h)
        : state.mode === "call"
          ? callFrame(state, callLines, callTitle, w, h)
          : resultsFrame(state, result, title, w, h);
    stdout.write(`\x1b[H${frame.map((l) => `${l}\x1b[K`).join("\r\n")}\x1b[J`);
  };
  // The chart is the server's histogram of the whole range (search-chart.ts), fetched when first shown.
  let options: SearchOptions | undefined;
  let chart: { of: FetchedRows; data?: ChartData; error?: string } | undefined;
  const loadChart = async (of: FetchedRows, o: SearchOptions) => {
    chart = { of };
    try {
      const c = await fetchChart(coordinatorClient(o, io, false), o);
      if (chart?.of === of) chart = { of, data: c.chart };
      if (c.notes.length) state = { ...state, status: c.notes.join(" · ") };
    } catch (e) {
      if (chart?.of === of) chart = { of, error: errorMessage(e) };
    }
    render();
    draw();
  };
  const render = () => {
    if (!fetched) return;
    if (state.format === "chart" && options) {
      if (chart?.of !== fetched) void loadChart(fetched, options);
      result = chart?.data
        ? renderChart(chart.data, { width: size().w })
        : [chart?.error ? `error: ${chart.error}` : "Counting events over the whole range…"];
      return;
    }
    result = screenLines(
      renderOutput(state.format, fetched, {
        ...(fields ? { fields } : {}),
        width: size().w,
        ...readableColumns(options),
      }).text,
    );
  };
  const search = async () => {
    let o: SearchOptions;
    try {
      o = searchOptions(state.values, io.now(), { interactive: true });
    } catch (e) {
      state = { ...state, status: `error: ${errorMessage(e)}` };
      draw();
      return;
    }
    state = { ...state, busy: true, status: "" };
    draw();
    try {
      const r = await fetchRows(coordinatorClient(o, io, false), o);
      fetched = r;
      options = o;
      fields = o.fields;
      title = countLine(r);
      state = {
        ...state,
        busy: false,
        mode: "results",
        scroll: 0,
        selected: 0,
        rows: r.rows.length,
        status: r.notes.join(" · "),
      };
      render();
    } catch (e) {
      state = { ...state, busy: false, status: `error: ${errorMessage(e)}` };
    }
    draw();
  };

  /** Enter on a table row: every message of its call and correlated legs, as a ladder. */
  const openCall = async () => {
    const row = fetched?.rows[state.selected];
    const id = typeof row?.session_id === "string" ? row.session_id : "";
    if (!options || id === "") {
      state = { ...state, status: "this row has no Call-ID to open" };
      draw();
      return;
    }
    const o = options;
    state = { ...state, busy: true, mode: "call", callScroll: 0, status: "" };
    callTitle = `call ${id}`;
    callLines = [];
    draw();
    try {
      const messages = await fetchCallMessages(coordinatorClient(o, io, false), o, [id]);
      if (state.mode !== "call") return;
      callLines = screenLines(renderCallFlow(buildCallFlow(messages)).join("\n"));
      state = { ...state, busy: false };
    } catch (e) {
      state = { ...state, busy: false, status: `error: ${errorMessage(e)}` };
    }
    draw();
  };

  return await new Promise<number>((resolve) => {
    const onData = (chunk: Buffer | string) => {
      const { h } = size();
      try {
        for (const key of parseKeys(typeof chunk === "string" ? chunk : chunk.toString("utf8"))) {
          const r = handleKey(state, key, resultsPage(h), state.mode === "call" ? callLines.length : result.length);
          state = r.state;
          if (r.effect === "quit") return finish(0);
          if (r.effect === "search") void search();
          if (r.effect === "call") void openCall();
          if (r.effect === "render") render();
        }
      } catch (e) {
        // A rendering bug must not leave the terminal in raw mode: show it and keep the screen usable.
        state = { ...state, status: `error: ${errorMessage(e)}` };
      }
      draw();
    };
    const onResize = () => {
      render();
      draw();
    };
    const onSignal = () => finish(130);
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      stdin.off("data", onData);
      stdout.off("resize", onResize);
      process.off("SIGTERM", onSignal);
      process.off("SIGHUP", onSignal);
      try {
        stdin.setRawMode(false);
      } catch {
        // the terminal is gone (SIGHUP): nothing to restore
      }
      stdin.pause();
      stdout.write(ALT_OFF);
      resolve(code);
    };
    stdout.write(ALT_ON);
    stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdin.resume();
    stdout.on("resize", onResize);
    process.on("SIGTERM", onSignal);
    process.on("SIGHUP", onSignal);
    draw();
  });
}
