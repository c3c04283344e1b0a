/**
 * The wllama engine in a context without a Worker constructor (Node here, a
 * SharedWorker in Chromium): each load leases a connected tab to host
 * llama.cpp's Worker (wllama-tab-host.ts). A tab lives on across loads (the
 * app switches GGUF models, or a load fails), so a lease the engine is done
 * with must stop listening to the tab's `gone` signal: else every past load
 * keeps a listener there, and with it its lease and load, for the tab's life.
 * @wllama/wllama itself is a stand-in here (its load resolves at once).
 */
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ModelRecord } from "../../src/models/record.js";

const loads = { fail: false, waitForWorker: false };
type WorkerLike = { terminate(): void };
vi.mock("../../src/engine/wllama/import-wllama.js", () => ({
  importWllama: async () => ({
    Wllama: class {
      worker: WorkerLike | undefined;
      async loadModel() {
        if (loads.fail) throw new Error("unsupported GGUF version");
        if (loads.waitForWorker) {
          // As wllama does: it makes its Worker, then waits for the Worker to answer module.init.
          this.worker = new (globalThis as unknown as { Worker: new (url: string, options: { type: WorkerType }) => WorkerLike }).Worker("data:text/javascript,", { type: "module" });
          await new Promise(() => {});
        }
      }
      isMultithread = () => false;
      getNumThreads = () => 1;
      getLoadedContextInfo = () => ({ n_vocab: 32 });
      exit = async () => this.worker?.terminate();
    },
  }),
}));

const { createWllamaEngine } = await import("../../src/engine/wllama/wllama-engine.js");
const { offerHostingTabs } = await import("../../src/engine/wllama/wllama-tab-host.js");

const record = (id: string): ModelRecord => ({ model: `https://models.example/${id}.gguf`, model_id: id, model_lib: "", family: "qwen2.5", engine: { kind: "wllama" } }) as ModelRecord;
const stored = { storedFiles: async () => [new Blob(["GGUF"])] };

afterEach(() => {
  offerHostingTabs(null);
  loads.fail = false;
  loads.waitForWorker = false;
});

describe("the wllama engine's tab leases in a shared worker", () => {
  it("a tab that hosts load after load holds a listener for the model loaded now only, none for models unloaded or loads that failed", async () => {
    const gone = new AbortController();
    offerHostingTabs(() => ({ gone: gone.signal, startWorker: async () => undefined }));
    const engine = createWllamaEngine({ kind: "wllama" });
    for (const id of ["a", "b", "c", "d"]) await engine.load(record(id), stored);
    expect(engine.loadedModel).toBe("d");
    expect(getEventListeners(gone.signal, "abort")).toHaveLength(1);
    loads.fail = true;
    await expect(engine.load(record("e"), stored)).rejects.toMatchObject({ code: "model_load_failed" });
    await expect(engine.load(record("f"), stored)).rejects.toMatchObject({ code: "model_load_failed" });
    expect(getEventListeners(gone.signal, "abort")).toHaveLength(0);
    await engine.unload();
    expect(getEventListeners(gone.signal, "abort")).toHaveLength(0);
  });

  it("a hosting tab that never starts the Worker (frozen, misbehaving): the request's abort ends the load instead of holding the queue for good, and the tab is told to end the Worker", async () => {
    loads.waitForWorker = true;
    let port: MessagePort | undefined;
    // It takes the port and never answers.
    offerHostingTabs(() => ({ gone: new AbortController().signal, startWorker: (_script, given) => ((port = given), new Promise<void>(() => {})) }));
    const engine = createWllamaEngine({ kind: "wllama" });
    const request = new AbortController();
    const load = engine.load(record("a"), { ...stored, signal: request.signal });
    const outcome = load.then(
      () => "loaded",
      (error: Error) => error.name,
    );
    while (!port) await new Promise((resolve) => setTimeout(resolve, 5));
    const told = new Promise<unknown>((resolve) => (port!.onmessage = (event) => resolve(event.data)));
    request.abort();
    // Settles at once once aborted; before, it never did (2 s only tells the two apart).
    expect(await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve("still loading"), 2000))])).toBe("AbortError");
    expect(await told).toEqual({ type: "terminate" });
    expect(engine.loadedModel).toBeNull();
    port.close();
  });

  it("the tab closing still fails the loaded model's requests with 503 gguf_host_tab_closed", async () => {
    const gone = new AbortController();
    offerHostingTabs(() => ({ gone: gone.signal, startWorker: async () => undefined }));
    const engine = createWllamaEngine({ kind: "wllama" });
    await engine.load(record("a"), stored);
    await engine.load(record("b"), stored);
    gone.abort();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(engine.loadedModel).toBeNull();
    const request = { model: "b", messages: [{ role: "user", content: "hi" }] } as never;
    await expect(engine.generate(request, new AbortController().signal)[Symbol.asyncIterator]().next()).rejects.toMatchObject({ status: 503, code: "gguf_host_tab_closed" });
  });
});
