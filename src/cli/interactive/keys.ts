/**
 * Terminal input in raw mode → keys. A chunk may hold several keys (typing fast, pasting) and
 * escape sequences (ECMA-48 CSI `ESC [ params final`, SS3 `ESC O x`); a lone ESC is the Esc key.
 */
export type KeyName =
  | "tab"
  | "backtab"
  | "enter"
  | "escape"
  | "up"
  | "down"
  | "left"
  | "right"
  | "home"
  | "end"
  | "pageup"
  | "pagedown"
  | "backspace"
  | "delete"
  | "ctrl-c"
  | "ctrl-u"
  | "char";

export interface Key {
  name: KeyName;
  /** The character of a `char` key. */
  ch?: string;
}

const CSI: Record<string, KeyName> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  Z: "backtab",
  "1~": "home",
  "7~": "home",
  "4~": "end",
  "8~": "end",
  "3~": "delete",
  "5~": "pageup",
  "6~": "pagedown",
};

export function parseKeys(chunk: string): Key[] {
  const keys: Key[] = [];
  const cps = [...chunk];
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    if (c === "\x1b") {
      const next = cps[i + 1];
      if (next === "[" || next === "O") {
        // Parameters (digits, ;) then one final byte in @..~.
        let j = i + 2;
        let params = "";
        while (j < cps.length && /[0-9;]/.test(cps[j]!)) params += cps[j++];
        const final = cps[j];
        if (final === undefined) break; // cut sequence: drop it
        const name = CSI[final === "~" ? `${params.split(";")[0]}~` : final];
        if (name) keys.push({ name });
        i = j;
        continue;
      }
      keys.push({ name: "escape" });
      continue;
    }
    if (c === "\t") keys.push({ name: "tab" });
    else if (c === "\r" || c === "\n") keys.push({ name: "enter" });
    else if (c === "\x7f" || c === "\b") keys.push({ name: "backspace" });
    else if (c === "\x03") keys.push({ name: "ctrl-c" });
    else if (c === "\x15") keys.push({ name: "ctrl-u" });
    else if (c >= " ") keys.push({ name: "char", ch: c });
    // other control characters are ignored
  }
  return keys;
}
