import type { Avatar } from "../avatars.ts";

const MAX_PHOTO_BYTES = 1 << 20;

/**
 * The profile photo, fetched with the provider's access token (docs/AUTH.md "OAuth 2.0", profile
 * photo) when it lies on one of `providerOrigins` (the provider's endpoints); a picture on another
 * site is fetched without it, so the token never reaches a third party. No redirects are followed
 * (they could carry the token elsewhere). Only an image answer of at most 1 MiB is kept; a failure
 * returns the reason and the login goes on without a photo.
 */
export async function fetchPhoto(
  url: string,
  accessToken: string,
  providerOrigins: readonly string[],
  timeoutMs: number,
): Promise<{ ok: true; value: Avatar } | { ok: false; reason: string }> {
  try {
    const headers: Record<string, string> = { accept: "image/*" };
    if (providerOrigins.includes(new URL(url).origin)) headers.authorization = `Bearer ${accessToken}`;
    const r = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    if (!r.ok) return { ok: false, reason: `HTTP ${r.status}` };
    const contentType = (r.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!contentType.startsWith("image/"))
      return { ok: false, reason: `not an image (${contentType || "no content type"})` };
    const declared = Number(r.headers.get("content-length") ?? "0");
    if (declared > MAX_PHOTO_BYTES) return { ok: false, reason: `larger than ${MAX_PHOTO_BYTES} bytes` };
    const bytes = new Uint8Array(await r.arrayBuffer());
    if (bytes.byteLength > MAX_PHOTO_BYTES) return { ok: false, reason: `larger than ${MAX_PHOTO_BYTES} bytes` };
    if (bytes.byteLength === 0) return { ok: false, reason: "empty body" };
    return { ok: true, value: { bytes, contentType } };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}
