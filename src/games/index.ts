// Game relays (docs/GAMES.md). Each game exports its hub here; names
// both games have (the join request, the per-user seat cap) carry the game's name.
export {
  MAX_FRAMES_PER_SEC,
  MAX_SEATS_PER_USER as NETRIS_MAX_SEATS_PER_USER,
  NetrisHub,
  realClock,
  WAITING_TIMEOUT_MS,
  GARBAGE,
  BOARD_ROWS,
  BOARD_COLS,
  type Clock,
  type JoinRequest as NetrisJoinRequest,
  type NetrisPeer,
  type NetrisSeat,
  type NetrisServerFrame,
} from "./netris/hub.ts";
export * from "./chess/index.ts";
