/** Game widgets of this part of issue 22 (docs/GAMES.md), merged into the registry (ui/src/widgets/registry.ts). */
import { Netris } from "./netris/widget.ts";
import { Doom } from "./doom/widget.ts";
import type { WidgetProps } from "../widgets/registry.ts";
import type { FunctionComponent } from "preact";

export const GAME_WIDGETS: Record<string, { title: string; component: FunctionComponent<WidgetProps>; w: number; h: number; config: Record<string, unknown> }> = {
  "game-netris": { title: "Netris", component: Netris, w: 6, h: 10, config: {} },
  "game-doom": { title: "Doom", component: Doom, w: 6, h: 10, config: {} },
};
