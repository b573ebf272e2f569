/**
 * The keyboard on a chart (docs/UI.md "Charts"): ← and → move the cursor one bucket (← with no
 * cursor starts at the last), Home and End go to the ends, Esc hides the cursor and goes no
 * further, so the widget around the chart stays open. Shared by the event chart and the KPI chart.
 */

/** The bucket `key` moves the cursor to from `at` among `count` buckets; undefined for other keys. */
export function chartKeyTarget(key: string, at: number | undefined, count: number): number | undefined {
  const last = count - 1;
  if (last < 0) return undefined;
  const from = at ?? -1;
  if (key === "ArrowRight") return Math.min(last, from + 1);
  if (key === "ArrowLeft") return Math.max(0, from < 0 ? last : from - 1);
  if (key === "Home") return 0;
  if (key === "End") return last;
  return undefined;
}

/** The chart's onKeyDown over `count` buckets, with the cursor in `hover`. */
export function chartKeyHandler(
  count: number,
  hover: number | undefined,
  setHover: (i: number | undefined) => void,
): (e: KeyboardEvent) => void {
  return (e) => {
    const next = chartKeyTarget(e.key, hover, count);
    if (next !== undefined) {
      e.preventDefault();
      setHover(next);
    } else if (e.key === "Escape" && hover !== undefined) {
      e.stopPropagation();
      setHover(undefined);
    }
  };
}
