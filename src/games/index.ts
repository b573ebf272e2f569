export * from "./chess/index.ts";
