export {
  NetChessRelay,
  parseJoin,
  MAX_SEATS_PER_USER,
  MAX_SPECTATOR_SEATS_PER_USER,
  ROOM_CODE,
  INITIAL_SEC,
  INCREMENT_SEC,
  type Connection,
  type JoinRequest,
  type RelayOptions,
} from "./relay.ts";
export { MAX_SPECTATORS, type Seat } from "./room.ts";
export { positionProblem } from "./position.ts";
export {
  CHAT_MAX,
  DISPLAY_MAX,
  sanitizeText,
  type ClientFrame,
  type ServerFrame,
  type Color,
  type GameOverReason,
} from "./frames.ts";
export {
  chooseMove,
  greedyMove,
  llmEnabled,
  CHESS_SYSTEM_PROMPT,
  type ChessLlmConfig,
  type MoveChoice,
} from "./llm.ts";
