/**
 * The open MCP connections of one host (where the engine runs: the dedicated
 * or shared worker, or the page with `worker: false`), keyed by (client,
 * server_url, headers): a conversation's later turns reuse the session, two
 * tabs of a shared worker never share one, and different credentials never
 * share one. A connection unused for `idleCloseMs` is closed; one that failed
 * is dropped, so the next request connects again.
 */
import { McpConnection, type McpTarget } from "./connection.js";
import type { McpLimits } from "./limits.js";

interface Pooled {
  connection: Promise<McpConnection>;
  idle: ReturnType<typeof setTimeout> | undefined;
  users: number;
}

export class McpPool {
  private readonly open = new Map<string, Pooled>();

  constructor(readonly limits: McpLimits) {}

  /** Runs `work` with the connection for `target` (opened on first use), held open while it runs. */
  async use<T>(target: McpTarget, client: string | undefined, work: (connection: McpConnection) => Promise<T>): Promise<T> {
    const key = JSON.stringify([client ?? "", target.url, Object.entries(target.headers).sort(([a], [b]) => (a < b ? -1 : 1))]);
    let pooled = this.open.get(key);
    if (!pooled) {
      const fresh: Pooled = { connection: McpConnection.open(target, this.limits), idle: undefined, users: 0 };
      pooled = fresh;
      this.open.set(key, fresh);
      fresh.connection.catch(() => {
        if (this.open.get(key) === fresh) this.open.delete(key);
      });
    }
    const entry = pooled;
    clearTimeout(entry.idle);
    entry.users++;
    try {
      return await work(await entry.connection);
    } finally {
      entry.users--;
      if (entry.users === 0 && this.open.get(key) === entry) {
        entry.idle = setTimeout(() => {
          this.open.delete(key);
          void entry.connection.then((c) => c.close(), () => undefined);
        }, this.limits.idleCloseMs);
        // An idle connection never keeps a Node process (tests, a server-side host) alive.
        (entry.idle as { unref?: () => void }).unref?.();
      }
    }
  }

  /** How many connections are open or opening. */
  get size(): number {
    return this.open.size;
  }

  async closeAll(): Promise<void> {
    const entries = [...this.open.values()];
    this.open.clear();
    for (const entry of entries) {
      clearTimeout(entry.idle);
      await entry.connection.then((c) => c.close(), () => undefined);
    }
  }
}
