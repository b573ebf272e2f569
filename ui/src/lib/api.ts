/**
 * The v4 API as the browser sees it: same-origin fetch with the HttpOnly `svc_session` cookie
 * (the browser adds the Origin header the CSRF check wants on writes). Every failure becomes an
 * ApiError whose message is words a user can act on; a 401 also tells the shell to show the login.
 */
import type { Static } from "@sinclair/typebox";
import type { Pagination } from "../../../src/api/openapi/schemas.ts";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: readonly string[] = [],
  ) {
    super(message);
  }
}

const meta =
  typeof document === "undefined" ? null : document.querySelector<HTMLMetaElement>('meta[name="svc-api-base"]');
const configured = meta?.content ?? "";
/** `{api_prefix}/api/v4`; the server writes it into the page (a placeholder left in means a dev page). */
export const API_BASE = configured && !configured.startsWith("%") ? configured.replace(/\/+$/, "") : "/api/v4";

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when any request answers 401 (session expired or revoked). */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

interface ErrorJson {
  error?: string;
  message?: string;
  fields?: string[];
}

const STATUS_WORDS: Record<number, string> = {
  400: "The request was not accepted",
  401: "Your session has ended: sign in again",
  403: "You are not allowed to do this",
  404: "Not found",
  409: "This conflicts with existing data",
  429: "Too many requests: wait a moment and try again",
  500: "The appliance failed to answer this request (see its log)",
  503: "The service is unavailable right now",
};

/** A failed answer as an ApiError (also for uploads sent outside `send`, ui/src/lib/upload.ts). */
export async function toError(r: Response): Promise<ApiError> {
  let j: ErrorJson = {};
  try {
    j = (await r.json()) as ErrorJson;
  } catch {
    // not JSON: keep the status words
  }
  const message =
    j.message && r.status !== 500 ? j.message : (STATUS_WORDS[r.status] ?? `The appliance answered HTTP ${r.status}`);
  return new ApiError(r.status, j.error ?? `HTTP_${r.status}`, message, j.fields ?? []);
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  let r: Response;
  try {
    r = await fetch(`${API_BASE}${path}`, {
      method,
      credentials: "same-origin",
      headers:
        body === undefined
          ? { accept: "application/json" }
          : { accept: "application/json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(
      0,
      "NETWORK",
      "The appliance did not answer: check the network connection and that the service is running",
    );
  }
  if (!r.ok) {
    const e = await toError(r);
    if (r.status === 401 && !path.startsWith("/auth/sessions")) for (const fn of unauthorizedListeners) fn();
    throw e;
  }
  return r;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const r = await send(method, path, body);
  if (r.status === 204) return undefined as T;
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string) => api<T>("GET", path);
export const post = <T>(path: string, body: unknown) => api<T>("POST", path, body);
export const put = <T>(path: string, body: unknown) => api<T>("PUT", path, body);
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const del = (path: string) => api<void>("DELETE", path);

/** POSTs `body` and saves the answer as a file (the name from Content-Disposition, else `fallback`). */
export async function downloadFile(
  path: string,
  body: unknown,
  fallback: string,
): Promise<{ fileName: string; bytes: number; partial: string | null }> {
  const r = await send("POST", path, body);
  const blob = await r.blob();
  const cd = r.headers.get("content-disposition") ?? "";
  const fileName = /filename="?([^";]+)"?/i.exec(cd)?.[1] ?? fallback;
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  // A file has no meta: an export over coordinator.nodes that missed a node names it here.
  return { fileName, bytes: blob.size, partial: r.headers.get("x-svc-partial") };
}

/** A thrown value as a sentence. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A list answer (`listResponse` of src/api/openapi/schemas.ts); its pagination is the server's type. */
export interface ListBody<T> {
  data: { items: T[] };
  meta: { pagination: Static<typeof Pagination> };
}
