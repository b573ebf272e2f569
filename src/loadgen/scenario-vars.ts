/**
 * Call variables of sipp XML scenarios (docs/LOADGEN.md "Scenario actions and variables"): each
 * call has its own set. A variable holds a number (sipp's double), a boolean or a string (a regexp
 * match or `assignstr`). In a template `[$name]` renders a number as sipp's `%lf` does
 * (`3.000000`), a boolean as `true`/`false`, a string as it is, and an unset variable as nothing.
 */

export type VarValue = { kind: "number"; n: number } | { kind: "bool"; b: boolean } | { kind: "string"; s: string };

export class CallVars {
  private readonly values = new Map<string, VarValue>();

  get(name: string): VarValue | undefined {
    return this.values.get(name);
  }

  set(name: string, v: VarValue): void {
    this.values.set(name, v);
  }

  unset(name: string): void {
    this.values.delete(name);
  }

  /** The `[$name]` rendering. */
  text(name: string): string {
    const v = this.values.get(name);
    if (!v) return "";
    if (v.kind === "number") return v.n.toFixed(6);
    if (v.kind === "bool") return v.b ? "true" : "false";
    return v.s;
  }

  /** A number as a number; a string read as one (NaN when it is not); a boolean as 1/0; unset as 0. */
  number(name: string): number {
    const v = this.values.get(name);
    if (!v) return 0;
    if (v.kind === "number") return v.n;
    if (v.kind === "bool") return v.b ? 1 : 0;
    const t = v.s.trim();
    return t === "" ? Number.NaN : Number(t);
  }

  /** String value for `strcmp`: a string as it is, others rendered. */
  string(name: string): string {
    return this.text(name);
  }

  /**
   * What `test="var"` and `condexec="var"` check (sipp's "is set"): a boolean its value, a number
   * non-zero, a string (a regexp match) non-empty; an unset variable is false.
   */
  truthy(name: string): boolean {
    const v = this.values.get(name);
    if (!v) return false;
    if (v.kind === "bool") return v.b;
    if (v.kind === "number") return v.n !== 0;
    return v.s !== "";
  }
}

/** `[$name]` references in a template. */
export function templateVars(template: string): string[] {
  return [...template.matchAll(/\[\$([^\]\s]+)\]/g)].map((m) => m[1]!);
}
