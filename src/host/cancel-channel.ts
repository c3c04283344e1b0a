/**
 * `cancel` for a background response generated in another worker of the
 * origin (another tab's dedicated worker): the request goes out on a
 * BroadcastChannel, the host running it cancels it and answers with the
 * cancelled response. No answer within the wait: no live worker runs it.
 */
import { randomId } from "../protocol/ids.js";
import type { ResponseObject } from "../protocol/responses/types.js";

const CHANNEL = "webgpu-openai:responses";
const WAIT_MS = 2000;

type Message = { type: "cancel"; id: string; nonce: string } | { type: "cancelled"; nonce: string; response: ResponseObject };

export class CancelChannel {
  private readonly channel: BroadcastChannel | null;
  private readonly waiting = new Map<string, (response: ResponseObject) => void>();

  /** `cancelHere`: cancels the response if this host runs it (its final state), else null. */
  constructor(cancelHere: (id: string) => Promise<ResponseObject | null>) {
    this.channel = typeof BroadcastChannel !== "undefined" ? new BroadcastChannel(CHANNEL) : null;
    if (!this.channel) return;
    this.channel.onmessage = (event: MessageEvent<Message>) => {
      const message = event.data;
      if (message?.type === "cancelled") this.waiting.get(message.nonce)?.(message.response);
      if (message?.type === "cancel") {
        void cancelHere(message.id).then((response) => {
          if (response) this.channel?.postMessage({ type: "cancelled", nonce: message.nonce, response } satisfies Message);
        }, () => {});
      }
    };
    // A host's channel must not keep a Node process (or a worker) alive on its own.
    (this.channel as { unref?: () => void }).unref?.();
  }

  /** Asks the other workers of the origin to cancel `id`: its cancelled state, or null when none runs it. */
  elsewhere(id: string): Promise<ResponseObject | null> {
    const channel = this.channel;
    if (!channel) return Promise.resolve(null);
    const nonce = randomId(16);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(nonce);
        resolve(null);
      }, WAIT_MS);
      this.waiting.set(nonce, (response) => {
        clearTimeout(timer);
        this.waiting.delete(nonce);
        resolve(response);
      });
      channel.postMessage({ type: "cancel", id, nonce } satisfies Message);
    });
  }
}
