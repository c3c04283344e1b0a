/**
 * Which worker a client's `worker` option selects: a dedicated worker (the
 * library's or the app's own), or the origin's SharedWorker (the library's or
 * the app's own), falling back to a dedicated worker where the browser has no
 * SharedWorker (Chrome on Android, some embedded webviews).
 */
import type { Backend } from "./backend.js";
import { dedicatedLink, sharedLink, type WorkerLink } from "./worker-link.js";

export const SHARED_FALLBACK_REASON = "This browser has no SharedWorker: a dedicated worker serves this tab alone.";

let fallbackReported = false;

export interface WorkerChoice {
  connect: () => WorkerLink;
  /** Adds what the choice knows to the backend (the fallback's reason in workerInfo). */
  wrap(backend: Backend): Backend;
}

const hasSharedWorker = () => typeof (globalThis as { SharedWorker?: unknown }).SharedWorker === "function";

export function chooseWorkerLink(option: true | "shared" | Worker | SharedWorker): WorkerChoice {
  const same = (backend: Backend) => backend;
  if (option === "shared") {
    if (hasSharedWorker()) return { connect: () => sharedLink(), wrap: same };
    if (!fallbackReported) {
      fallbackReported = true;
      console.info(`webgpu-openai: createClient({ worker: "shared" }): ${SHARED_FALLBACK_REASON}`);
    }
    return {
      connect: () => dedicatedLink(),
      wrap: (backend) => ({ ...backend, workerInfo: async () => ({ ...(await backend.workerInfo()), fallback: SHARED_FALLBACK_REASON }) }),
    };
  }
  if (option === true) return { connect: () => dedicatedLink(), wrap: same };
  if (hasSharedWorker() && option instanceof SharedWorker) return { connect: () => sharedLink(option), wrap: same };
  return { connect: () => dedicatedLink(option as Worker), wrap: same };
}
