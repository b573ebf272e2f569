/**
 * The one popover of the dashboard (docs/UI.md "Popovers"): time presets, Fields…, Columns…,
 * Saved filters, multi-select values, widget menus. The panel is shown in the browser's top layer (the HTML
 * `popover` attribute; `position: fixed` where that is missing), so no widget's `overflow` clips
 * it, and it is placed next to its trigger inside the viewport (flipped above when there is more
 * room there, scrolling inside when taller than the room). It closes on Esc and on a click outside,
 * focus goes back to the trigger, only one is open at a time, and it is keyboard reachable: the
 * trigger is a button with aria-expanded / aria-haspopup / aria-controls (ArrowDown opens it),
 * arrows and Home/End move between the items, Tab moves on (leaving closes), Enter activates.
 *
 *   const pop = usePopover({ label: "Columns shown" });
 *   <button type="button" ...${pop.trigger}>Columns…</button>
 *   <${PopoverPanel} pop=${pop} class="chooser-pop">…</${PopoverPanel}>
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.ts";

export interface PopoverOptions {
  /** Accessible name of the panel. */
  label: string;
  /** `menu`: items are role=menuitem buttons; `dialog`: a panel of controls (checkboxes, presets, a form). */
  kind?: "menu" | "dialog";
  /** Which edge of the trigger the panel lines up with. */
  align?: "start" | "end";
}

export interface Popover {
  open: boolean;
  show(): void;
  /** Closes; focus returns to the trigger unless `focusTrigger` is false. */
  close(focusTrigger?: boolean): void;
  /** Spread onto the trigger `<button>`. */
  trigger: Record<string, unknown>;
  /** Spread onto the panel (PopoverPanel does it). */
  panel: Record<string, unknown>;
}

const MARGIN = 8;
const GAP = 4;
const FOCUSABLE =
  'button:not([disabled]), summary, a[href], input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
/** Inputs where the arrow keys change the value or move the caret: the panel leaves them alone. */
const OWN_ARROWS = /^(text|search|number|date|time|datetime-local|month|week|email|url|tel|password|range)$/;

let seq = 0;
let openOne: { close(focusTrigger?: boolean): void } | null = null;

/** Places the panel below (or above) the trigger, inside the viewport; sizes are in CSS px. */
export function placePanel(panel: HTMLElement, trigger: HTMLElement, align: "start" | "end"): void {
  const r = trigger.getBoundingClientRect();
  const vw = document.documentElement.clientWidth;
  const vh = document.documentElement.clientHeight;
  const natural = panel.scrollHeight + (panel.offsetHeight - panel.clientHeight);
  const below = vh - r.bottom - GAP - MARGIN;
  const above = r.top - GAP - MARGIN;
  const down = natural <= below || below >= above;
  const room = Math.max(60, Math.min(down ? below : above, Math.round(vh * 0.7)));
  panel.style.maxHeight = `${room}px`;
  panel.style.maxWidth = `${vw - 2 * MARGIN}px`;
  const h = Math.min(natural, room);
  const w = panel.offsetWidth;
  const left = Math.max(MARGIN, Math.min(align === "end" ? r.right - w : r.left, vw - MARGIN - w));
  const top = Math.max(MARGIN, Math.min(down ? r.bottom + GAP : r.top - GAP - h, vh - MARGIN - h));
  panel.style.left = `${Math.round(left)}px`;
  panel.style.top = `${Math.round(top)}px`;
}

const items = (panel: HTMLElement, kind: "menu" | "dialog") =>
  Array.from(
    panel.querySelectorAll<HTMLElement>(kind === "menu" ? '[role^="menuitem"]:not([disabled])' : FOCUSABLE),
  ).filter((el) => el.getClientRects().length > 0);

export function usePopover({ label, kind = "dialog", align = "start" }: PopoverOptions): Popover {
  const [open, setOpen] = useState(false);
  const [id] = useState(() => `pop-${++seq}`);
  const triggerRef = useRef<HTMLElement>(null);
  const panelRef = useRef<HTMLElement>(null);
  const self = useRef<{ close(focusTrigger?: boolean): void }>({ close: () => undefined });

  const close = (focusTrigger = true) => {
    if (openOne === self.current) openOne = null;
    setOpen(false);
    if (focusTrigger) triggerRef.current?.focus({ preventScroll: true });
  };
  self.current.close = close;
  const show = () => {
    if (openOne && openOne !== self.current) openOne.close(false);
    openOne = self.current;
    setOpen(true);
  };

  useLayoutEffect(() => {
    const panel = panelRef.current;
    const trig = triggerRef.current;
    if (!open || !panel || !trig) return;
    // Top layer: above every widget, the header and the transaction window, never clipped.
    if (typeof panel.showPopover === "function" && !panel.matches(":popover-open")) panel.showPopover();
    const place = () => placePanel(panel, trig, align);
    place();
    const first = panel.querySelector<HTMLElement>("[data-autofocus]") ?? items(panel, kind)[0] ?? panel;
    first.focus({ preventScroll: true });

    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (panel.contains(t) || trig.contains(t)) return;
      self.current.close(false);
      // A click on nothing focusable would leave focus on <body>: give it back to the trigger.
      requestAnimationFrame(() => {
        if (!document.activeElement || document.activeElement === document.body) trig.focus({ preventScroll: true });
      });
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      // Capture phase: the popover closes, not the transaction window around it.
      e.preventDefault();
      e.stopPropagation();
      self.current.close(true);
    };
    const ro = new ResizeObserver(place);
    ro.observe(panel);
    addEventListener("resize", place);
    addEventListener("scroll", place, true);
    document.addEventListener("pointerdown", onDown, true);
    document.addEventListener("keydown", onKey, true);
    return () => {
      ro.disconnect();
      removeEventListener("resize", place);
      removeEventListener("scroll", place, true);
      document.removeEventListener("pointerdown", onDown, true);
      document.removeEventListener("keydown", onKey, true);
      if (openOne === self.current) openOne = null;
    };
  }, [open]);

  const onPanelKey = (e: KeyboardEvent) => {
    const panel = panelRef.current;
    const t = e.target as HTMLElement;
    if (!panel) return;
    if (e.key === "Enter" && t instanceof HTMLInputElement && (t.type === "checkbox" || t.type === "radio")) {
      e.preventDefault();
      t.click();
      return;
    }
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key)) return;
    if (
      t instanceof HTMLTextAreaElement ||
      t instanceof HTMLSelectElement ||
      (t instanceof HTMLInputElement && OWN_ARROWS.test(t.type))
    )
      return;
    const list = items(panel, kind);
    if (list.length === 0) return;
    e.preventDefault();
    e.stopPropagation();
    const i = list.indexOf(document.activeElement as HTMLElement);
    const next =
      e.key === "Home"
        ? 0
        : e.key === "End"
          ? list.length - 1
          : e.key === "ArrowDown"
            ? (i + 1) % list.length
            : (i - 1 + list.length) % list.length;
    list[next]?.focus();
  };
  const onFocusOut = (e: FocusEvent) => {
    // Tab out of the panel closes it (a click elsewhere is handled on pointerdown).
    const to = e.relatedTarget as Node | null;
    if (to && !panelRef.current?.contains(to) && !triggerRef.current?.contains(to)) self.current.close(false);
  };

  return {
    open,
    show,
    close,
    trigger: {
      ref: triggerRef,
      "aria-haspopup": kind,
      "aria-expanded": open ? "true" : "false",
      "aria-controls": open ? id : undefined,
      onClick: () => (open ? close(false) : show()),
      onKeyDown: (e: KeyboardEvent) => {
        if (e.key === "ArrowDown" && !open) {
          e.preventDefault();
          show();
        }
      },
    },
    panel: {
      ref: panelRef,
      id,
      popover: "manual",
      role: kind,
      "aria-label": label,
      tabindex: -1,
      onKeyDown: onPanelKey,
      onFocusOut,
      // The widget title bar starts a drag on pointerdown: a panel opened from it is not the title bar.
      onPointerDown: (e: PointerEvent) => e.stopPropagation(),
    },
  };
}

/** The panel of a popover, rendered only while open. */
export function PopoverPanel({
  pop,
  class: cls,
  children,
}: {
  pop: Popover;
  class?: string;
  children?: ComponentChildren;
}) {
  return pop.open ? html`<div ...${pop.panel} class=${cls ? `popover ${cls}` : "popover"}>${children}</div>` : null;
}
