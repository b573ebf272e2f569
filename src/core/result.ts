/** Hot paths return a Result instead of throwing; each failure reason is counted by the caller. */
export type Result<T, R extends string = string> = { ok: true; value: T } | { ok: false; reason: R; detail?: string };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const fail = <R extends string>(reason: R, detail?: string): { ok: false; reason: R; detail?: string } =>
  detail === undefined ? { ok: false, reason } : { ok: false, reason, detail };
