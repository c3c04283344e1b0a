// One client for the whole app, created at module level: React re-renders (and StrictMode's double
// effects) must not start a second engine worker or load the model twice.
import { createClient } from "webgpu-openai";

export const MODEL = "Qwen3-0.6B";

/** Load progress goes to whoever subscribes (the progress bar). */
const progressListeners = new Set();
export function onProgress(listener) {
  progressListeners.add(listener);
  return () => progressListeners.delete(listener);
}

export const client = createClient({
  onProgress: (progress) => progressListeners.forEach((listener) => listener(progress)),
});
