/** Keys of a falling-blocks board (Netris, SIPetris): ←/→ move, ↓ soft drop, ↑/X rotate, Z back, Space drop. */
import type { LockResult, NetrisBoard } from "./engine.ts";

/** Applies `e` to `b`: undefined when the key is not a board key; else whether a piece locked. */
export function boardKey(e: KeyboardEvent, b: NetrisBoard): { lock: LockResult | undefined } | undefined {
  const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  const acts: Record<string, () => LockResult | undefined> = {
    ArrowLeft: () => (b.move(-1), undefined),
    ArrowRight: () => (b.move(1), undefined),
    ArrowDown: () => b.step(),
    ArrowUp: () => (b.rotate(1), undefined),
    x: () => (b.rotate(1), undefined),
    z: () => (b.rotate(-1), undefined),
    " ": () => b.hardDrop(),
  };
  const act = acts[k];
  if (!act) return undefined;
  e.preventDefault();
  return { lock: act() };
}
