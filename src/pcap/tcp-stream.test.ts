import { describe, expect, test } from "bun:test";
import { TcpDirection, type PushResult } from "./tcp-stream.ts";
import { decodeText, text } from "./testing.ts";

type Seg = [seq: number, data: string, syn?: boolean];

/** Pushes segments as frames 1..n; returns per frame the kind and the text made available, with the frame it is attributed to. */
function run(segments: Seg[], dir = new TcpDirection()): Array<string> {
  return segments.map(([seq, data, syn], i) =>
    describeResult(dir.push({ seq, syn: syn ?? false, payload: text(data) }, { frameNumber: i + 1, timestampUs: i })),
  );
}

const describeResult = (r: PushResult) =>
  `${r.kind}${r.restarted ? "!" : ""}:${r.chunks.map((c) => `${c.gapBefore ? "~" : ""}${decodeText(c.data)}@${c.at.frameNumber}`).join("|")}`;

describe("TcpDirection", () => {
  test.each<[string, Seg[], string[]]>([
    [
      "in order after a SYN",
      [
        [100, "", true],
        [101, "abc"],
        [104, "def"],
      ],
      ["empty:", "in_order:abc@2", "in_order:def@3"],
    ],
    [
      "without a SYN the first segment sets the sequence",
      [
        [5000, "abc"],
        [5003, "d"],
      ],
      ["in_order:abc@1", "in_order:d@2"],
    ],
    [
      "a retransmission is dropped",
      [
        [1, "abc"],
        [1, "abc"],
        [4, "d"],
      ],
      ["in_order:abc@1", "retransmission:", "in_order:d@3"],
    ],
    [
      "a partial retransmission contributes only its new bytes",
      [
        [1, "abc"],
        [2, "bcdef"],
      ],
      ["in_order:abc@1", "in_order:def@2"],
    ],
    [
      "out of order: held, then released by the gap filler",
      [
        [1, "ab"],
        [6, "fg"],
        [4, "de"],
        [3, "c"],
      ],
      ["in_order:ab@1", "out_of_order:", "out_of_order:", "in_order:c@4|de@4|fg@4"],
    ],
    [
      "overlapping held segments are trimmed",
      [
        [1, "a"],
        [3, "cde"],
        [4, "de"],
        [2, "b"],
      ],
      ["in_order:a@1", "out_of_order:", "out_of_order:", "in_order:b@4|cde@4"],
    ],
    [
      "sequence numbers wrap around 2^32",
      [
        [0xfffffffe, "ab"],
        [0, "cd"],
      ],
      ["in_order:ab@1", "in_order:cd@2"],
    ],
    [
      "a new SYN restarts the direction",
      [
        [10, "", true],
        [11, "ab"],
        [900, "", true],
        [901, "xy"],
      ],
      ["empty:", "in_order:ab@2", "empty!:", "in_order:xy@4"],
    ],
    [
      "a retransmitted SYN changes nothing",
      [
        [10, "", true],
        [11, "ab"],
        [10, "", true],
        [13, "c"],
      ],
      ["empty:", "in_order:ab@2", "empty:", "in_order:c@4"],
    ],
    [
      "data on the SYN follows its sequence number",
      [
        [10, "ab", true],
        [13, "c"],
      ],
      ["in_order:ab@1", "in_order:c@2"],
    ],
  ])("%s", (_name, segments, expected) => {
    expect(run(segments)).toEqual(expected);
  });

  test("a hole that never fills is skipped at flush; the held bytes keep their own frames", () => {
    const dir = new TcpDirection();
    expect(
      run(
        [
          [1, "ab"],
          [10, "jk"],
          [12, "lm"],
          [20, "tu"],
        ],
        dir,
      ),
    ).toEqual(["in_order:ab@1", "out_of_order:", "out_of_order:", "out_of_order:"]);
    expect(dir.flush().map((c) => `${c.gapBefore ? "~" : ""}${decodeText(c.data)}@${c.at.frameNumber}`)).toEqual([
      "~jk@2",
      "lm@2",
      "~tu@4",
    ]);
  });

  test("a hole is given up once too many bytes wait behind it", () => {
    const dir = new TcpDirection({ maxPendingBytes: 4, maxPendingSegments: 100 });
    expect(
      run(
        [
          [1, "a"],
          [5, "ef"],
          [7, "gh"],
          [9, "i"],
        ],
        dir,
      ),
    ).toEqual(["in_order:a@1", "out_of_order:", "out_of_order:", "out_of_order:~ef@2|gh@2|i@2"]);
  });
});
