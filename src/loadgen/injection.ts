/**
 * sipp injection files (`-inf`, docs/LOADGEN.md "Scenario files"): the first line names the order
 * (SEQUENTIAL, RANDOM or USER), every other non-empty line is one row of `;`-separated fields that a
 * call reads as [field0], [field1], … SEQUENTIAL and USER hand row n to call n, wrapping around.
 */
import { readFileSync } from "node:fs";
import { LoadgenUsageError } from "./options.ts";

export interface Injection {
  rowFor(callNumber: number): readonly string[];
  /** Every row in file order, with the file line it came from (for errors naming a row). */
  readonly rows: ReadonlyArray<{ fields: readonly string[]; line: number }>;
}

export function parseInjection(text: string, path: string): Injection {
  const lines = text
    .split(/\r?\n/)
    .map((l, i) => ({ l, line: i + 1 }))
    .filter(({ l }) => l.trim() !== "" && !l.startsWith("#") && !l.startsWith("//"));
  const order = (lines.shift()?.l ?? "").split(",")[0]!.trim().toUpperCase();
  if (!["SEQUENTIAL", "RANDOM", "USER"].includes(order))
    throw new LoadgenUsageError(`${path}: the first line must be SEQUENTIAL, RANDOM or USER, got "${order}"`);
  const numbered = lines.map(({ l, line }) => ({ fields: l.split(";"), line }));
  const rows = numbered.map((r) => r.fields);
  if (rows.length === 0) throw new LoadgenUsageError(`${path}: no rows after the ${order} line`);
  return {
    rows: numbered,
    rowFor: (n) => (order === "RANDOM" ? rows[Math.floor(Math.random() * rows.length)]! : rows[(n - 1) % rows.length]!),
  };
}

export function loadInjection(path: string): Injection {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot read injection file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return parseInjection(text, path);
}
