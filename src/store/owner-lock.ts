/**
 * Who is generating a stored response. Each host holds a Web Lock named after
 * itself for its whole life; a response it generates records that name. A
 * worker that dies (a reload, the last tab of a shared worker closed) lets go
 * of its lock, so a host starting later tells an interrupted response (its
 * owner's lock free) from one another live worker is generating (held).
 * Without Web Locks (Node), nothing is ever taken for interrupted: a memory
 * store does not outlive its host anyway.
 */
import { randomId } from "../protocol/ids.js";

const PREFIX = "webgpu-openai:response-host:";

interface LockManagerLike {
  request(name: string, options: { ifAvailable?: boolean }, callback: (lock: unknown) => Promise<unknown> | unknown): Promise<unknown>;
  query(): Promise<{ held?: Array<{ name?: string }> }>;
}

const locks = (): LockManagerLike | undefined => (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;

export class ResponseOwner {
  readonly name = `${PREFIX}${randomId(16)}`;
  /** Resolves once the lock is held (at once without Web Locks). */
  readonly held: Promise<void>;

  constructor() {
    const manager = locks();
    this.held = manager
      ? new Promise<void>((resolve) => {
          void manager.request(this.name, {}, () => {
            resolve();
            return new Promise(() => {}); // held for the life of this context
          });
        })
      : Promise.resolve();
  }

  /** Whether interrupted responses can be told apart here at all. */
  static get available(): boolean {
    return locks() !== undefined;
  }

  /** The owners whose context is still alive. */
  static async alive(): Promise<Set<string>> {
    const manager = locks();
    if (!manager) return new Set();
    const state = await manager.query();
    return new Set((state.held ?? []).map((lock) => lock.name ?? "").filter((name) => name.startsWith(PREFIX)));
  }

  /** Runs `work` holding the lock `name` if no one else holds it; false when someone does (another host resuming it). */
  static async exclusively(name: string, work: () => Promise<void>): Promise<boolean> {
    const manager = locks();
    if (!manager) {
      await work();
      return true;
    }
    let ran = false;
    await manager.request(`webgpu-openai:resume:${name}`, { ifAvailable: true }, async (lock) => {
      if (lock === null) return;
      ran = true;
      await work();
    });
    return ran;
  }
}
