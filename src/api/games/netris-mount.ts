// Netris relay and /gamedata/ (docs/GAMES.md), exported for the composition root (src/main.ts).
export { netrisRoutes, parseNetrisQuery, sanitiseDisplay } from "./netris.ts";
export { gamedataRoutes } from "./gamedata.ts";
