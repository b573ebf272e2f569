import { describe, expect, test } from "bun:test";
import { planPcapCalls } from "./search-pcap.ts";

const rows = (...ids: Array<string | null>) =>
  ids.map((id, i) => ({ uuid: `u${i}`, ...(id === null ? {} : { session_id: id }) }));

describe("planPcapCalls: which calls a search's PCAP holds", () => {
  test("distinct Call-IDs in row order; rows without one are counted", () => {
    const p = planPcapCalls({ rows: rows("b", "a", "b", null, "c"), limitReached: false, limit: 50 }, false);
    expect(p).toEqual({ ok: true, value: { callIds: ["b", "a", "c"], withoutCallId: 1 } });
  });

  test("a search cut at its default limit is refused, not written short", () => {
    const p = planPcapCalls({ rows: rows("a", "b"), limitReached: true, limit: 50_000 }, false);
    expect(p.ok).toBe(false);
    if (!p.ok)
      expect(p.detail).toBe(
        "the search matches more than 50 000 messages: narrow it (--from/--to, filters) or give --limit N to write the calls of the newest N matches",
      );
  });

  test("with --limit given, the calls of the newest N matches are taken", () => {
    expect(planPcapCalls({ rows: rows("a", "b"), limitReached: true, limit: 2 }, true)).toEqual({
      ok: true,
      value: { callIds: ["a", "b"], withoutCallId: 0 },
    });
  });

  test("more calls than the maximum: refused, naming both numbers", () => {
    const p = planPcapCalls({ rows: rows("a", "b", "c"), limitReached: false, limit: 50 }, false, 2);
    expect(p.ok).toBe(false);
    if (!p.ok)
      expect([p.reason, p.detail]).toEqual([
        "TOO_MANY_CALLS",
        "the search matches 3 calls; a PCAP holds at most 2: narrow the search or lower --limit",
      ]);
  });

  test("no rows, or rows without a Call-ID: nothing to write", () => {
    const none = planPcapCalls({ rows: [], limitReached: false, limit: 50 }, false);
    expect(none.ok ? "" : none.detail).toBe("the search matched no messages");
    const noId = planPcapCalls({ rows: rows(null, null), limitReached: false, limit: 50 }, false);
    expect(noId.ok ? "" : noId.detail).toBe("none of the 2 rows has a Call-ID");
  });
});
