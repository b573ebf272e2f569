/** Game widgets (docs/GAMES.md "Widgets"), merged into the registry (ui/src/widgets/registry.ts). */
import { Netris } from "./netris/widget.ts";
import { Doom } from "./doom/widget.ts";
import { Sipetris } from "./sipetris/widget.ts";
import { PacketDefender } from "./packet-defender/widget.ts";
import type { WidgetProps } from "../widgets/types.ts";
import type { FunctionComponent } from "preact";

export const GAME_WIDGETS: Record<
  string,
  { title: string; component: FunctionComponent<WidgetProps>; w: number; h: number; config: Record<string, unknown> }
> = {
  "game-netris": { title: "Netris", component: Netris, w: 6, h: 10, config: {} },
  "game-doom": { title: "Doom", component: Doom, w: 6, h: 10, config: {} },
  "game-sipetris": { title: "SIPetris", component: Sipetris, w: 4, h: 8, config: {} },
  "game-packet-defender": { title: "Packet Defender", component: PacketDefender, w: 6, h: 8, config: {} },
};
