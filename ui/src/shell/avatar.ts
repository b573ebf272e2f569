/**
 * The signed-in user's picture in the top bar (docs/AUTH.md "OAuth 2.0", profile photo): the
 * single-sign-on photo from `GET /me/avatar` when `/me` says one is cached, else (or when it fails
 * to load) the initials on a coloured disc.
 */
import { useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import type { Me } from "../lib/types.ts";

export function initialsOf(me: Pick<Me, "first_name" | "last_name" | "username">): string {
  const named = `${me.first_name.trim().charAt(0)}${me.last_name.trim().charAt(0)}`;
  if (named !== "") return named.toUpperCase();
  const parts = me.username.split(/[^\p{L}\p{N}]+/u).filter((p) => p !== "");
  return ((parts[0]?.charAt(0) ?? "") + (parts[1]?.charAt(0) ?? "")).toUpperCase() || "?";
}

export function Avatar({ me }: { me: Me }) {
  const [broken, setBroken] = useState(false);
  if (me.avatar && !broken) {
    return html`<img class="avatar" src=${me.avatar} alt=${`Profile photo of ${me.username}`} width="26" height="26" onError=${() => setBroken(true)} />`;
  }
  return html`<span class="avatar avatar-initials" role="img" aria-label=${`Initials of ${me.username}`}>${initialsOf(me)}</span>`;
}
