/**
 * Where in a JSON text a member is, so the mappings editor can show a server validation error
 * ("fields_mapping.3.selector: required ...") at its line, and a syntax error at its line. The
 * JSON is read with jsonc-parser (the scanner of VS Code's JSON editor), which keeps offsets, where
 * JSON.parse keeps none and its messages differ between browsers. Pure; see json-lines.test.ts.
 */
import { findNodeAtLocation, type JSONPath, type ParseError, parse, parseTree } from "jsonc-parser";

/** Line (1-based) of the value at `path` (e.g. ["fields_mapping", 3, "selector"]); the deepest existing prefix when the member is missing. */
export function lineOfPath(text: string, path: ReadonlyArray<string | number>): number | undefined {
  const root = parseTree(text);
  if (!root) return undefined;
  for (let n = path.length; n >= 0; n--) {
    const node = findNodeAtLocation(root, path.slice(0, n) as JSONPath);
    if (node) return lineAt(text, node.offset);
  }
  return undefined;
}

/** 1-based line of a character offset. */
const lineAt = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

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

/** Line of the first syntax error in a JSON text (strict JSON: no comments, no trailing commas); undefined when it parses. */
export function syntaxErrorLine(text: string): number | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors[0] ? lineAt(text, errors[0].offset) : undefined;
}
