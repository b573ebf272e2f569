/**
 * Where in a JSON text a member is, so the mappings editor can show a server validation error
 * ("fields_mapping.3.selector: required ...") at its line. Pure; see json-lines.test.ts.
 */

/** Line (1-based) of the value at `path` (e.g. ["fields_mapping", 3, "selector"]); the deepest existing prefix when the member is missing. */
export function lineOfPath(text: string, path: ReadonlyArray<string | number>): number | undefined {
  let i = 0;
  let line = 1;
  let best: number | undefined;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) {
      if (text[i] === "\n") line++;
      i++;
    }
  };
  const str = (): string => {
    i++; // opening quote
    let out = "";
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") {
        out += text[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (text[i] === "\n") line++;
      out += text[i];
      i++;
    }
    i++;
    return out;
  };
  // Walks one value; `depth` is how many path members it matched so far (-1: off the path).
  const value = (depth: number): void => {
    ws();
    if (depth >= 0) {
      if (depth === path.length) {
        best = line;
        depth = -1;
      } else if (best === undefined || depth > 0) best = line;
    }
    const c = text[i];
    if (c === "{") {
      i++;
      for (;;) {
        ws();
        if (text[i] === "}") {
          i++;
          return;
        }
        if (text[i] !== '"') return;
        const keyLine = line;
        const key = str();
        ws();
        if (text[i] === ":") i++;
        const on = depth >= 0 && path[depth] === key;
        if (on) best = keyLine;
        value(on ? depth + 1 : -1);
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return;
        } else return;
      }
    }
    if (c === "[") {
      i++;
      let n = 0;
      for (;;) {
        ws();
        if (text[i] === "]") {
          i++;
          return;
        }
        const on = depth >= 0 && String(path[depth]) === String(n);
        value(on ? depth + 1 : -1);
        n++;
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return;
        } else return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  };
  value(path.length === 0 ? 0 : 0);
  return best;
}

/** `fields_mapping.3.selector: required ...` → ["fields_mapping", 3, "selector"]. */
export function pathOfMessage(message: string): Array<string | number> | undefined {
  const m = /^([A-Za-z_][\w]*(?:[.[]\w+\]?)*)\s*:/.exec(message);
  if (!m) return undefined;
  return m[1]!
    .replace(/\[(\w+)\]/g, ".$1")
    .split(".")
    .filter((s) => s !== "")
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** Line and column of a JSON.parse error message (V8: "... at position N" / "(line L column C)"). */
export function parseErrorLine(text: string, message: string): number | undefined {
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return Number(lc[1]);
  const pos = /position (\d+)/.exec(message);
  if (pos) return text.slice(0, Number(pos[1])).split("\n").length;
  return undefined;
}
