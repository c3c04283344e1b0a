/**
 * `create({ monitor })`: an EventTarget given to the app's callback, firing
 * `downloadprogress` ProgressEvents with `loaded` in 0..1 and `total` 1,
 * always at least 0 and 1, from the client's load progress (download, then
 * loading onto the GPU, as one fraction).
 */
import type { CreateMonitor } from "./types.js";

export interface Monitor {
  /** Fires `downloadprogress` with `fraction`, never going back. */
  progress(fraction: number): void;
}

function progressEvent(loaded: number): Event {
  if (typeof ProgressEvent === "function") return new ProgressEvent("downloadprogress", { lengthComputable: true, loaded, total: 1 });
  // Node has no ProgressEvent: an Event with the same fields.
  return Object.assign(new Event("downloadprogress"), { lengthComputable: true, loaded, total: 1 });
}

export function createMonitor(callback: ((monitor: CreateMonitor) => void) | undefined): Monitor {
  if (callback === undefined) return { progress() {} };
  if (typeof callback !== "function") throw new TypeError("`monitor` must be a function.");
  const target = new EventTarget() as CreateMonitor;
  let handler: CreateMonitor["ondownloadprogress"] = null;
  Object.defineProperty(target, "ondownloadprogress", {
    get: () => handler,
    set: (value) => (handler = typeof value === "function" ? value : null),
  });
  target.addEventListener("downloadprogress", (event) => handler?.call(target, event as ProgressEvent));
  callback(target);
  let last = -1;
  return {
    progress(fraction) {
      const loaded = Math.min(1, Math.max(last, fraction));
      if (loaded === last) return;
      last = loaded;
      target.dispatchEvent(progressEvent(loaded));
    },
  };
}
