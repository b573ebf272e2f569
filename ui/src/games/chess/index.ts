export { ChessWidget } from "./chess-widget.ts";
export { NetChessWidget } from "./netchess-widget.ts";
