/**
 * The widget grid: a 12-column CSS grid, widgets moved by dragging their title bar and resized by
 * the corner grip (pointer events), or from the keyboard on the move handle (arrows move, Shift +
 * arrows resize). The layout is committed once per gesture; collisions push widgets down
 * (lib/grid.ts). Below 760 px the grid becomes one column in reading order.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { html } from "../lib/html.ts";
import { COLUMNS, placeWidget } from "../lib/grid.ts";
import type { Widget } from "../lib/types.ts";

export const ROW_PX = 40;
const GAP_PX = 8;

interface Drag {
  id: string;
  mode: "move" | "resize";
  startX: number;
  startY: number;
  orig: Widget;
}

interface Props {
  layout: Widget[];
  onChange: (layout: Widget[]) => void;
  renderWidget: (w: Widget, handle: ComponentChildren, grip: ComponentChildren) => ComponentChildren;
}

export function GridView({ layout, onChange, renderWidget }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(1200);
  const [preview, setPreview] = useState<Widget[] | null>(null);
  const drag = useRef<Drag | null>(null);
  const previewRef = useRef<Widget[] | null>(null);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);

  const narrow = width < 760;
  const colPx = (width - GAP_PX * (COLUMNS - 1)) / COLUMNS;
  const shown = preview ?? layout;

  const onPointerMove = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = Math.round((e.clientX - d.startX) / (colPx + GAP_PX));
    const dy = Math.round((e.clientY - d.startY) / (ROW_PX + GAP_PX));
    const change = d.mode === "move" ? { x: d.orig.x + dx, y: d.orig.y + dy } : { w: d.orig.w + dx, h: d.orig.h + dy };
    previewRef.current = placeWidget(layout, d.id, change);
    setPreview(previewRef.current);
  };
  const end = () => {
    removeEventListener("pointermove", onPointerMove);
    removeEventListener("pointerup", end);
    const p = previewRef.current;
    drag.current = null;
    previewRef.current = null;
    setPreview(null);
    if (p) onChange(p);
  };
  const start = (w: Widget, mode: Drag["mode"]) => (e: PointerEvent) => {
    if (narrow || e.button !== 0) return;
    if (mode === "move" && (e.target as HTMLElement).closest("button:not(.drag-handle), a, input, select")) return;
    e.preventDefault();
    drag.current = { id: w.id, mode, startX: e.clientX, startY: e.clientY, orig: w };
    addEventListener("pointermove", onPointerMove);
    addEventListener("pointerup", end);
  };
  const onKey = (w: Widget) => (e: KeyboardEvent) => {
    const step: Record<string, [number, number]> = {
      ArrowLeft: [-1, 0],
      ArrowRight: [1, 0],
      ArrowUp: [0, -1],
      ArrowDown: [0, 1],
    };
    const s = step[e.key];
    if (!s) return;
    e.preventDefault();
    onChange(
      placeWidget(layout, w.id, e.shiftKey ? { w: w.w + s[0], h: w.h + s[1] } : { x: w.x + s[0], y: w.y + s[1] }),
    );
  };

  const ordered = narrow ? [...shown].sort((a, b) => a.y - b.y || a.x - b.x) : shown;
  return html`
    <div ref=${ref} class=${narrow ? "grid grid-narrow" : "grid"} style=${{ gridAutoRows: `${ROW_PX}px`, gap: `${GAP_PX}px` }}>
      ${ordered.map((w) => {
        const style = narrow
          ? { gridRow: `span ${Math.max(w.h, 4)}` }
          : { gridColumn: `${w.x + 1} / span ${w.w}`, gridRow: `${w.y + 1} / span ${w.h}` };
        const handle = html`<button
          type="button"
          class="drag-handle"
          aria-label=${`Move or resize ${w.type} widget: arrow keys move, Shift and arrow keys resize`}
          title="Drag to move; arrow keys move, Shift+arrows resize"
          onKeyDown=${onKey(w)}
        >⠿</button>`;
        const grip = narrow
          ? null
          : html`<span class="resize-grip" aria-hidden="true" onPointerDown=${start(w, "resize")}></span>`;
        return html`<div key=${w.id} class=${drag.current?.id === w.id ? "cell dragging" : "cell"} style=${style} onPointerDown=${(
          e: PointerEvent,
        ) => {
          if ((e.target as HTMLElement).closest(".widget-head")) start(w, "move")(e);
        }}>${renderWidget(w, handle, grip)}</div>`;
      })}
    </div>
  `;
}
