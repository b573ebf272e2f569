/**
 * A popover that is never clipped by its widget (widgets cut their overflow): the panel is placed
 * with `position: fixed` next to its button, below it or above when there is more room there,
 * kept inside the window and placed again when its content grows. Esc closes it and gives the focus back to the button; so does a click
 * outside button and panel. Opening moves the focus to the panel's first control.
 */
import type { RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

export interface Floating {
  open: boolean;
  setOpen: (open: boolean) => void;
  anchor: RefObject<HTMLButtonElement | null>;
  panel: RefObject<HTMLDivElement | null>;
  /** Inline style of the panel. */
  style: Record<string, string>;
}

const MARGIN = 8;

export function useFloating(align: "start" | "end" = "start"): Floating {
  const [open, setOpen] = useState(false);
  const [style, setStyle] = useState<Record<string, string>>({ position: "fixed", visibility: "hidden" });
  const anchor = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);

  const place = () => {
    const a = anchor.current?.getBoundingClientRect();
    const p = panel.current;
    if (!a || !p) return;
    const below = innerHeight - a.bottom - MARGIN;
    const above = a.top - MARGIN;
    const height = p.scrollHeight;
    const down = height <= below || below >= above;
    const width = Math.min(p.offsetWidth, innerWidth - 2 * MARGIN);
    const left = align === "end" ? a.right - width : a.left;
    setStyle({
      position: "fixed",
      left: `${Math.max(MARGIN, Math.min(left, innerWidth - width - MARGIN))}px`,
      ...(down ? { top: `${a.bottom + 2}px` } : { bottom: `${innerHeight - a.top + 2}px` }),
      maxHeight: `${Math.max(120, down ? below : above)}px`,
      maxWidth: `${innerWidth - 2 * MARGIN}px`,
    });
  };

  useLayoutEffect(() => {
    if (!open) {
      setStyle({ position: "fixed", visibility: "hidden" });
      return;
    }
    place();
    panel.current?.querySelector<HTMLElement>("input, button, select, [tabindex]")?.focus();
  }, [open]);

  useEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      const t = e.target as Node;
      if (!panel.current?.contains(t) && !anchor.current?.contains(t)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      setOpen(false);
      anchor.current?.focus();
    };
    const onMove = () => place();
    const grows = new ResizeObserver(onMove);
    if (panel.current) grows.observe(panel.current);
    document.addEventListener("pointerdown", onPointer, true);
    document.addEventListener("keydown", onKey);
    addEventListener("resize", onMove);
    addEventListener("scroll", onMove, true);
    return () => {
      grows.disconnect();
      document.removeEventListener("pointerdown", onPointer, true);
      document.removeEventListener("keydown", onKey);
      removeEventListener("resize", onMove);
      removeEventListener("scroll", onMove, true);
    };
  }, [open]);

  return { open, setOpen, anchor, panel, style };
}
