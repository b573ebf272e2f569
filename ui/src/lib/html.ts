/** htm bound to Preact's h: tagged templates instead of JSX, so the UI needs no JSX compile step. */
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);
