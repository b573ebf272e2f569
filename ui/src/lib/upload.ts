/**
 * A multipart upload with progress (fetch cannot report upload progress; XMLHttpRequest can).
 * Same-origin with the session cookie, as every other call in api.ts; a failure becomes the same
 * ApiError, so the API's 4xx message reaches the user word for word.
 */
import { API_BASE, ApiError, toError } from "./api.ts";

export interface UploadProgress {
  loaded: number;
  total: number;
}

export function uploadForm<T>(
  path: string,
  form: FormData,
  onProgress: (p: UploadProgress) => void,
  onSent: () => void,
): { done: Promise<T>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<T>((resolve, reject) => {
    xhr.open("POST", `${API_BASE}${path}`);
    xhr.withCredentials = true;
    xhr.setRequestHeader("accept", "application/json");
    xhr.upload.onprogress = (e) => onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : 0 });
    xhr.upload.onload = () => onSent();
    xhr.onerror = () =>
      reject(
        new ApiError(
          0,
          "NETWORK",
          "The upload did not reach the appliance: check the network connection and that the service is running",
        ),
      );
    xhr.onabort = () => reject(new ApiError(0, "ABORTED", "The upload was cancelled"));
    xhr.onload = () => {
      const r = new Response(xhr.responseText || null, {
        status: xhr.status,
        headers: { "content-type": xhr.getResponseHeader("content-type") ?? "" },
      });
      if (r.ok) resolve(r.json() as Promise<T>);
      else toError(r).then(reject, reject);
    };
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}
