/**
 * The library's own worker, started as the page starts it (dedicated, and as
 * the origin's SharedWorker), refuses comlink messages other than calls of its
 * API methods: a script of the origin posting CONSTRUCT of `Function`, SET or
 * GET on the port gets a 400 and runs nothing in the worker, while an API call
 * on the same port is answered.
 */
import { afterEach, describe, expect, it } from "vitest";

const entry = new URL("../../src/worker/entry.ts", import.meta.url);
let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const undo of cleanup) undo();
  cleanup = [];
});

interface Reply {
  type: string;
  name?: string;
  value: unknown;
}

function ask(port: { postMessage(m: unknown): void; addEventListener(t: "message", l: (e: MessageEvent) => void): void; removeEventListener(t: "message", l: (e: MessageEvent) => void): void }, message: Record<string, unknown>): Promise<Reply> {
  const id = crypto.randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to ${JSON.stringify(message)}`)), 30_000);
    const listen = (event: MessageEvent) => {
      if (event.data?.id !== id) return;
      clearTimeout(timer);
      port.removeEventListener("message", listen);
      resolve(event.data);
    };
    port.addEventListener("message", listen);
    port.postMessage({ id, ...message });
  });
}

const refused = { type: "HANDLER", name: "throw", value: { isError: true, value: { status: 400, code: "worker_call_refused" } } };
const hostile = [
  { type: "CONSTRUCT", path: ["configure", "constructor"], argumentList: [{ type: "RAW", value: "self.pwned = true" }] },
  { type: "SET", path: ["queueState"], value: { type: "RAW", value: 1 } },
  { type: "GET", path: ["configure", "constructor"] },
  { type: "APPLY", path: ["configure", "constructor"], argumentList: [{ type: "RAW", value: "return 1" }] },
];

describe("the library's worker port", () => {
  it("dedicated: CONSTRUCT, SET and GET are refused; workerInfo is answered", async () => {
    const worker = new Worker(entry, { type: "module" });
    cleanup.push(() => worker.terminate());
    for (const message of hostile) expect(await ask(worker, message), message.type).toMatchObject(refused);
    expect(await ask(worker, { type: "APPLY", path: ["workerInfo"], argumentList: [] })).toMatchObject({ type: "RAW", value: { worker: "dedicated" } });
  }, 60_000);

  it("shared: the same on a tab's port to the origin's SharedWorker", async () => {
    const worker = new SharedWorker(entry, { type: "module", name: `port-guard-${crypto.randomUUID()}` });
    worker.port.start();
    cleanup.push(() => worker.port.close());
    for (const message of hostile) expect(await ask(worker.port, message), message.type).toMatchObject(refused);
    expect(await ask(worker.port, { type: "APPLY", path: ["workerInfo"], argumentList: [] })).toMatchObject({ type: "RAW", value: { worker: "shared" } });
  }, 60_000);
});
