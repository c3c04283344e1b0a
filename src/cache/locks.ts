/**
 * Many tabs, one download: a Web Lock per model and backend. The holder
 * downloads; the others wait, hear its progress on a BroadcastChannel, then
 * find everything in the cache and download nothing.
 */
import type { LoadProgress } from "../engine/types.js";

const lockName = (key: string) => `webgpu-openai:model:${key}`;

/** The Web Locks API where this context has it (secure contexts, window and worker scopes); undefined elsewhere (Node, http: pages). */
export const webLocks = (): LockManager | undefined => (typeof navigator !== "undefined" ? navigator.locks : undefined);

/** Runs `work` holding the model's lock; while waiting, relays the holder's progress to `onWaitProgress`. */
export async function withModelLock<T>(key: string, work: (share: (progress: LoadProgress) => void) => Promise<T>, options: { signal?: AbortSignal; onWaitProgress?: (progress: LoadProgress) => void } = {}): Promise<T> {
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`webgpu-openai:progress:${key}`) : null;
  const share = (progress: LoadProgress) => channel?.postMessage(progress);
  const locks = webLocks();
  if (!locks) {
    channel?.close();
    return work(() => undefined);
  }
  let holding = false;
  if (channel && options.onWaitProgress) {
    const relay = options.onWaitProgress;
    channel.onmessage = (event: MessageEvent<LoadProgress>) => {
      if (!holding) relay(event.data);
    };
  }
  try {
    return await locks.request(lockName(key), { mode: "exclusive", ...(options.signal ? { signal: options.signal } : {}) }, async () => {
      holding = true;
      return work(share);
    });
  } finally {
    channel?.close();
  }
}
