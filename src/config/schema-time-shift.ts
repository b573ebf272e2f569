import { Type } from "@sinclair/typebox";

/**
 * `ingest.hep.time_shift`: agent timestamps outside the accepted window (docs/ARCHITECTURE.md
 * "Agent clocks outside the accepted window"). Apart from schema.ts, which is at its size limit.
 */
const int = (def: number, description: string, min: number, max: number) =>
  Type.Integer({ default: def, description, minimum: min, maximum: max });

export const HepTimeShiftSchema = Type.Object(
  {
    enable: Type.Boolean({
      default: true,
      description:
        "shift out-of-window times per source; false = every such packet gets its arrival time (spacing lost)",
    }),
    max_ahead_sec: int(
      3600,
      "a shifted time may lie this far past the arrival time (a replay sends a long capture in a moment); beyond, the source's offset is fixed again",
      0,
      86400,
    ),
    reanchor_gap_sec: int(
      300,
      "the source's offset is fixed again when its shifted time falls this far behind the arrival time, or the source sent no out-of-window packet for this long",
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    max_sources: int(10000, "sources whose offset is remembered, least recently seen forgotten first", 1, 1_000_000),
  },
  {
    additionalProperties: false,
    default: {},
    description:
      'agent timestamps outside the accepted window [now - max_age_days, now + max_clock_skew_sec] (docs/ARCHITECTURE.md "Agent clocks outside the accepted window"): shifted by one offset per source (agent address + capture id), fixed at its first such packet as arrival time - packet time, so a replay of an old capture keeps its spacing and order; rows carry data_extra.time_source "shifted" and time_shifted_us',
  },
);
