/** Entry point of the dashboard bundle (ui/build.ts → ui-dist/assets/app.js). */
import { render } from "preact";
import { html } from "./lib/html.ts";
import { App } from "./shell/app.ts";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(html`<${App} />`, root);
}
