/**
 * The wire check and the attribute limit on their own (docs/OTLP.md "Limits"): varints of more
 * than 10 bytes or beyond 64 bits, lengths past their message and unused wire types are refused;
 * the protobuf and OTLP/JSON paths keep the same first attributes and count the same drops; a map
 * value's entries are not attributes.
 */
import { describe, expect, test } from "bun:test";
import { decodeLimited, limitJsonAttributes } from "./attribute-limit.ts";
import { MESSAGES } from "./proto.ts";
import { checkWire } from "./wire.ts";

const T = MESSAGES.traces.request;
const attrs = (n: number, prefix = "k") =>
  Array.from({ length: n }, (_v, i) => ({ key: `${prefix}${i}`, value: { intValue: i } }));

function request(spanAttrs: number) {
  return {
    resourceSpans: [
      {
        resource: { attributes: attrs(5, "r"), droppedAttributesCount: 1 },
        scopeSpans: [
          {
            scope: { name: "s", attributes: attrs(4, "s") },
            spans: [
              {
                name: "a",
                attributes: attrs(spanAttrs),
                events: [{ name: "e", attributes: attrs(6, "e") }],
                links: [{ attributes: attrs(2, "l") }],
              },
              // A map value of 10 entries is one attribute.
              { name: "b", attributes: [{ key: "map", value: { kvlistValue: { values: attrs(10, "m") } } }] },
            ],
          },
        ],
      },
    ],
  };
}

describe("OTLP wire check", () => {
  test("a sound body passes; over-long, overflowing, truncated and group-encoded fields are refused", () => {
    expect(checkWire(T, T.encode(T.fromObject(request(3))).finish())).toBeUndefined();
    expect(
      checkWire(T, new Uint8Array([0x98, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])),
    ).toContain("longer than 10 bytes");
    // A 10-byte varint is fine when its last byte holds bit 63 only (uint64 max), not when it holds more.
    expect(
      checkWire(T, new Uint8Array([0x98, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])),
    ).toBeUndefined();
    expect(
      checkWire(T, new Uint8Array([0x98, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])),
    ).toContain("overflows 64 bits");
    expect(checkWire(T, new Uint8Array([0x0a, 0x05, 0x00]))).toContain("runs past the end");
    expect(checkWire(T, new Uint8Array([0x0b, 0x0c]))).toContain("wire type 3");
    // Packed repeated varints are checked too (ExpBuckets.bucket_counts inside a metric).
    const M = MESSAGES.metrics.request;
    const good = M.encode(
      M.fromObject({
        resourceMetrics: [
          {
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: "h",
                    exponentialHistogram: { dataPoints: [{ positive: { offset: 1, bucketCounts: [1, 2, 3] } }] },
                  },
                ],
              },
            ],
          },
        ],
      }),
    ).finish();
    expect(checkWire(M, good)).toBeUndefined();
    const at = Buffer.from(good).indexOf(Buffer.from([0x01, 0x02, 0x03]));
    const bad = Buffer.concat([good.subarray(0, at + 2), Buffer.from([0x83])]);
    expect(checkWire(M, bad)).toBeString();
  });
});

describe("OTLP attribute limit", () => {
  test("protobuf: the first `limit` attributes of each list are kept, the rest counted; map entries are not attributes", () => {
    const body = T.encode(T.fromObject(request(9))).finish();
    const { message, dropped } = decodeLimited(T, body, 4);
    const o = T.toObject(message, { longs: Number }) as ReturnType<typeof request>;
    const rs = o.resourceSpans[0]!;
    const [a, b] = rs.scopeSpans[0]!.spans as unknown as [
      Record<string, unknown> & {
        attributes: { key: string }[];
        events: { attributes: unknown[]; droppedAttributesCount?: number }[];
      },
      { attributes: { value: { kvlistValue: { values: unknown[] } } }[] },
    ];
    expect(a.attributes.map((x) => x.key)).toEqual(["k0", "k1", "k2", "k3"]);
    expect(a.droppedAttributesCount).toBe(5);
    expect(a.events[0]!.attributes.length).toBe(4);
    expect(a.events[0]!.droppedAttributesCount).toBe(2);
    expect(rs.resource.attributes.length).toBe(4);
    expect(rs.resource.droppedAttributesCount).toBe(2);
    expect(rs.scopeSpans[0]!.scope.attributes.length).toBe(4);
    expect(b.attributes[0]!.value.kvlistValue.values.length).toBe(10);
    expect(dropped).toBe(5 + 2 + 1);
    // Without a limit nothing changes, and the state of one decode does not leak into the next.
    expect(decodeLimited(T, body, Number.POSITIVE_INFINITY).dropped).toBe(0);
    expect(
      (T.decode(body) as unknown as { resourceSpans: { scopeSpans: { spans: { attributes: unknown[] }[] }[] }[] })
        .resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes.length,
    ).toBe(9);
  });

  test("OTLP/JSON: the same cut, snake_case names included", () => {
    const j = request(9);
    expect(limitJsonAttributes("traces", j, 4)).toBe(8);
    const span = j.resourceSpans[0]!.scopeSpans[0]!.spans[0]! as unknown as {
      attributes: unknown[];
      droppedAttributesCount: number;
    };
    expect(span.attributes.length).toBe(4);
    expect(span.droppedAttributesCount).toBe(5);
    expect(j.resourceSpans[0]!.resource.droppedAttributesCount).toBe(2);
    const snake = {
      resource_logs: [{ scope_logs: [{ log_records: [{ attributes: attrs(3), dropped_attributes_count: 2 }] }] }],
    };
    expect(limitJsonAttributes("logs", snake, 1)).toBe(2);
    expect(snake.resource_logs[0]!.scope_logs[0]!.log_records[0]).toMatchObject({ dropped_attributes_count: 4 });
    const metrics = {
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                {
                  name: "g",
                  gauge: { dataPoints: [{ attributes: attrs(3), exemplars: [{ filteredAttributes: attrs(3) }] }] },
                },
              ],
            },
          ],
        },
      ],
    };
    expect(limitJsonAttributes("metrics", metrics, 2)).toBe(2);
  });
});
