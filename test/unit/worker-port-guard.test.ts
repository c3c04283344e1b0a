/**
 * The worker's port answers calls of its API methods and nothing else of
 * comlink: a script that reaches the port (any script of the origin can
 * connect to the SharedWorker) cannot CONSTRUCT `Function`, SET or GET
 * arbitrary paths, or open a second unguarded endpoint. Served here over a
 * MessageChannel exactly as the workers serve it (exposeEngineHost for the
 * dedicated worker, SharedHost.connect for each tab of the shared one), and
 * the real client (workerBackend) still reaches every method it calls.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as Comlink from "comlink";
import { EngineHost, createScriptedEngine, exposeEngineHost } from "../../src/testing.js";
import { SharedHost } from "../../src/worker/shared-host.js";
import { workerBackend, type Backend } from "../../src/client/backend.js";
import { ChunkQueue } from "../../src/client/chunk-queue.js";
import type { WorkerLink } from "../../src/client/worker-link.js";

const opened: MessagePort[] = [];
afterEach(() => {
  for (const port of opened.splice(0)) port.close();
});

type Serve = (port: MessagePort) => void;
const newHost = () => new EngineHost({ engine: createScriptedEngine({ replies: ["hi"] }) });
const dedicated: Serve = (port) => exposeEngineHost(newHost(), port as unknown as Comlink.Endpoint);
const shared: Serve = (port) => new SharedHost(newHost()).connect(port);

/** The page's end of a port served by `serve`. */
function connect(serve: Serve): MessagePort {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  serve(port2);
  return port1;
}

/** Sends one raw comlink message and waits for the reply with its id. */
function send(port: MessagePort, message: Record<string, unknown>): Promise<{ type: string; name?: string; value: { isError?: boolean; value?: { status?: number; code?: string; message?: string } } }> {
  const id = crypto.randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to ${JSON.stringify(message)}`)), 5000);
    port.addEventListener("message", function listen(event: MessageEvent) {
      if (event.data?.id !== id) return;
      clearTimeout(timer);
      port.removeEventListener("message", listen);
      resolve(event.data);
    });
    port.start();
    port.postMessage({ id, ...message });
  });
}

const refused = { type: "HANDLER", name: "throw", value: { isError: true, value: { status: 400, code: "worker_call_refused" } } };

describe.each([
  ["the dedicated worker's port", dedicated],
  ["a shared worker tab's port", shared],
])("%s", (_name, serve) => {
  it("refuses CONSTRUCT of Function: no code runs in the worker", async () => {
    const port = connect(serve);
    const marker = `ran${Math.random().toString(36).slice(2)}`;
    const reply = await send(port, { type: "CONSTRUCT", path: ["configure", "constructor"], argumentList: [{ type: "RAW", value: `globalThis.${marker} = true` }] });
    expect(reply).toMatchObject(refused);
    expect((globalThis as Record<string, unknown>)[marker]).toBeUndefined();
    expect(await send(port, { type: "CONSTRUCT", path: ["constructor"], argumentList: [] })).toMatchObject(refused);
  });

  it("refuses SET: the API's methods stay in place", async () => {
    const port = connect(serve);
    expect(await send(port, { type: "SET", path: ["queueState"], value: { type: "RAW", value: 42 } })).toMatchObject(refused);
    expect(await send(port, { type: "APPLY", path: ["queueState"], argumentList: [] })).toMatchObject({ type: "RAW", value: { waiting: 0, running: false } });
  });

  it("refuses GET of any path, APPLY of anything but a method name, and ENDPOINT", async () => {
    const port = connect(serve);
    for (const message of [
      { type: "GET", path: ["configure", "constructor", "name"] },
      { type: "GET", path: [] },
      { type: "APPLY", path: ["configure", "constructor"], argumentList: [{ type: "RAW", value: "return 1" }] },
      { type: "APPLY", path: ["constructor", "assign"], argumentList: [] },
      { type: "APPLY", path: ["hasOwnProperty"], argumentList: [{ type: "RAW", value: "x" }] },
      { type: "APPLY", path: [], argumentList: [] },
      { type: "ENDPOINT" },
    ]) {
      expect(await send(port, message), JSON.stringify(message)).toMatchObject(refused);
    }
  });

  it("refuses a call whose arguments are not comlink wire values (null, a number, a string, an array, a handler it has not got or cannot read): a 400, nothing thrown in the worker, and the port goes on", async () => {
    const port = connect(serve);
    for (const argumentList of [[null], [42], ["text"], [[1, 2]], 7, "text", { 0: null }, [{ type: "HANDLER", name: "nope", value: 1 }], [{ type: "HANDLER", name: "proxy", value: 5 }], [{ type: "HANDLER", name: "throw", value: { isError: false, value: 1 } }]]) {
      const message = { type: "APPLY", path: ["queueState"], argumentList };
      expect(await send(port, message), JSON.stringify(message)).toMatchObject(refused);
    }
    expect(await send(port, { type: "RELEASE", argumentList: [null] })).toMatchObject(refused);
    expect(await send(port, { type: "APPLY", path: ["queueState"], argumentList: [] })).toMatchObject({ type: "RAW", value: { waiting: 0, running: false } });
  });
});

describe("a shared worker's configure from a page that is not the client", () => {
  it("a config without an engine is a 400 naming `engine`, and the next tab's configure builds the host as if it had never come", async () => {
    const shared = new SharedHost();
    const api = (port: MessagePort) => Comlink.wrap<{ configure(config: unknown): Promise<unknown>; queueState(): unknown }>(port as unknown as Comlink.Endpoint);
    const hostile = api(connect((port) => shared.connect(port)));
    for (const config of [null, 42, "text", [1], {}, { engine: null }, { engine: { kind: 5 } }]) {
      await expect(hostile.configure(config), JSON.stringify(config)).rejects.toMatchObject({ status: 400, code: "invalid_worker_config", param: "engine" });
    }
    const tab = api(connect((port) => shared.connect(port)));
    await expect(tab.configure({ engine: { kind: "scripted", replies: ["hi"] } })).resolves.toMatchObject({ ignored: [] });
    expect(await tab.queueState()).toEqual({ waiting: 0, running: false });
  });
});

describe("the client's own calls", () => {
  /** The real client side over a port served like the dedicated worker. */
  function clientOver(serve: Serve): Backend {
    const link: WorkerLink = { kind: "dedicated", endpoint: connect(serve) as unknown as Comlink.Endpoint, restartable: false, onError() {}, close() {} };
    return workerBackend({ engine: { kind: "scripted", replies: ["hi"] }, link: () => link, startTimeoutMs: 5000 });
  }

  it("every Backend method reaches the worker: none is refused (a method added to the client but not to the worker API fails here)", async () => {
    for (const serve of [dedicated, shared]) {
      const backend = clientOver(serve);
      const names = Object.keys(backend).filter((name) => name !== "terminate") as (keyof Backend)[];
      expect(names.length).toBeGreaterThan(15);
      const refusals: string[] = [];
      for (const name of names) {
        const argument = { model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], input: "hi", file: { data: new Uint8Array(4), name: "a.wav", type: "audio/wav" } };
        const call = (backend[name] as (...args: unknown[]) => Promise<unknown>)(argument, new ChunkQueue(), new AbortController().signal);
        const error = await call.then(
          () => null,
          (caught: { code?: string }) => caught,
        );
        if (error?.code === "worker_call_refused") refusals.push(name);
      }
      expect(refusals).toEqual([]);
    }
  });
});
