/**
 * The shared worker's side of llama.cpp's tab-hosted Worker
 * (src/engine/wllama/wllama-tab-host.ts), in Node, which like a SharedWorker in
 * Chromium has no global Worker: the stand-in exists only while a load waits
 * for wllama to make its Worker, the tab gets the script and both directions
 * of the relay (transfers moved), and a tab that is gone fails what waits on
 * it with a 503 instead of leaving it hanging. The real engine in Chromium:
 * test/browser/wllama-shared-worker.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hostedStream, leaseHostingTab, loadWithTabWorker, offerHostingTabs, TabWorkerLease, type HostingTab } from "../../src/engine/wllama/wllama-tab-host.js";

type Started = { script: Blob; port: MessagePort; type: WorkerType };
type WorkerLike = { postMessage(data: unknown, options?: { transfer: Transferable[] }): void; onmessage: ((event: MessageEvent) => void) | null; terminate(): void };

function tabThatRecords(): { tab: HostingTab; started: Promise<Started>; leave(): void } {
  const gone = new AbortController();
  let record: (started: Started) => void = () => {};
  const started = new Promise<Started>((resolve) => (record = resolve));
  return { tab: { gone: gone.signal, startWorker: async (script, port, type) => record({ script, port, type }) }, started, leave: () => gone.abort() };
}

afterEach(() => offerHostingTabs(null));

/**
 * A load like wllama's: it makes its Worker a moment after it starts (here
 * 20 ms, after the test has let the tab go) and fails when no Worker
 * constructor is there any more.
 */
function lateWorker(): Promise<never> {
  return new Promise((_, reject) =>
    setTimeout(() => {
      try {
        new (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker!("data:text/javascript,");
        reject(new Error("the late load made a Worker"));
      } catch (error) {
        reject(error);
      }
    }, 20),
  );
}

describe("llama.cpp's Worker, hosted by a tab for the shared worker", () => {
  it("the stand-in Worker exists only until wllama makes its Worker; the tab gets the script and relays both ways", async () => {
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe("undefined");
    const { tab, started } = tabThatRecords();
    offerHostingTabs(() => tab);
    const lease = leaseHostingTab("m")!;
    expect(lease).toBeInstanceOf(TabWorkerLease);
    const result = await loadWithTabWorker(lease, async () => {
      const StandIn = (globalThis as { Worker?: new (url: string, options?: { type: WorkerType }) => WorkerLike }).Worker!;
      const worker = new StandIn("data:text/javascript,self.onmessage=()=>{}", { type: "module" });
      // Gone again as soon as wllama's Worker is made: nothing else in the shared worker sees a Worker constructor.
      expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe("undefined");
      const { script, port, type } = await started;
      expect(await script.text()).toBe("self.onmessage=()=>{}");
      expect(type).toBe("module");
      // Towards the Worker: the message and its transfer list; the buffer is moved, not copied.
      const buffer = new ArrayBuffer(16);
      const posted = new Promise<unknown>((resolve) => (port.onmessage = (event) => resolve(event.data)));
      worker.postMessage({ verb: "fs.write", args: [buffer] }, { transfer: [buffer] });
      expect(buffer.byteLength).toBe(0);
      const command = (await posted) as { type: string; data: { verb: string; args: ArrayBuffer[] }; transfer: ArrayBuffer[] };
      expect(command).toMatchObject({ type: "post", data: { verb: "fs.write" } });
      expect(command.data.args[0].byteLength).toBe(16);
      expect(command.transfer[0]).toBe(command.data.args[0]);
      // From the Worker: what it posted reaches wllama's onmessage.
      const answered = new Promise<unknown>((resolve) => (worker.onmessage = (event) => resolve(event.data)));
      port.postMessage({ type: "message", data: { callbackId: 1, result: "ok" } });
      expect(await answered).toEqual({ callbackId: 1, result: "ok" });
      const ended = new Promise<unknown>((resolve) => (port.onmessage = (event) => resolve(event.data)));
      worker.terminate();
      expect(await ended).toEqual({ type: "terminate" });
      port.close();
      return "loaded";
    });
    expect(result).toBe("loaded");
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe("undefined");
  });

  it("the hosting tab gone mid-stream: the stream fails with 503 gguf_host_tab_closed instead of waiting forever", async () => {
    const { tab, leave } = tabThatRecords();
    const lease = new TabWorkerLease(tab, "tiny");
    // A source that yields once and then, like a Worker that is gone, never answers again.
    const silent = (async function* () {
      yield "first";
      await new Promise(() => {});
    })();
    const seen: string[] = [];
    const run = (async () => {
      for await (const item of await hostedStream(lease, Promise.resolve(silent))) {
        seen.push(item);
        leave();
      }
    })();
    await expect(run).rejects.toMatchObject({ status: 503, code: "gguf_host_tab_closed", param: "model" });
    expect(seen).toEqual(["first"]);
    // A later call on the lost lease fails at once.
    await expect(lease.race(new Promise(() => {}))).rejects.toMatchObject({ code: "gguf_host_tab_closed" });
  });

  it("a load whose tab is gone before wllama made its Worker fails with the same 503, and leaves no stand-in", async () => {
    const { tab, leave } = tabThatRecords();
    const lease = new TabWorkerLease(tab, "tiny");
    const load = loadWithTabWorker(lease, lateWorker);
    leave();
    await expect(load).rejects.toMatchObject({ status: 503, code: "gguf_host_tab_closed" });
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe("undefined");
  });

  it("a load abandoned before wllama made its Worker keeps the turn until it settles: its late `new Worker` cannot take the next load's stand-in", async () => {
    const first = tabThatRecords();
    let loadStarted = () => {};
    const started = new Promise<void>((resolve) => (loadStarted = resolve));
    const abandoned = loadWithTabWorker(new TabWorkerLease(first.tab, "tiny"), () => (loadStarted(), lateWorker()));
    await started;
    first.leave();
    await expect(abandoned).rejects.toMatchObject({ code: "gguf_host_tab_closed" });
    // The next load starts at once, while the abandoned one is still running on.
    const second = tabThatRecords();
    let secondStarts = 0;
    const counting: HostingTab = { ...second.tab, startWorker: async (...args) => (secondStarts++, second.tab.startWorker(...args)) };
    const next = loadWithTabWorker(new TabWorkerLease(counting, "tiny"), async () => {
      // wllama's own steps before it makes its Worker: long enough for the abandoned load's late one
      await new Promise((resolve) => setTimeout(resolve, 50));
      new (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker!("data:text/javascript,");
      await second.started;
      return "next";
    });
    expect(await next).toBe("next");
    // Only the second load's own Worker reached its tab; the abandoned load's constructor found no stand-in.
    expect(secondStarts).toBe(1);
  });

  it("a tab that cannot start the Worker, or whose Worker fails before it answers: the load fails with 503 gguf_host_tab_failed, naming why", async () => {
    const refusing: HostingTab = { gone: new AbortController().signal, startWorker: async () => Promise.reject(new Error("Refused to create a worker from 'blob:' (CSP)")) };
    const refused = loadWithTabWorker(new TabWorkerLease(refusing, "tiny"), async () => {
      new (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker!("data:text/javascript,");
      return new Promise<never>(() => {});
    });
    await expect(refused).rejects.toMatchObject({ status: 503, code: "gguf_host_tab_failed", message: expect.stringContaining("CSP") });
    // The Worker started but its script failed before posting anything.
    const { tab, started } = tabThatRecords();
    const failing = loadWithTabWorker(new TabWorkerLease(tab, "tiny"), async () => {
      new (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker!("data:text/javascript,");
      const { port } = await started;
      port.postMessage({ type: "error", message: "SyntaxError: Unexpected token" });
      return new Promise<never>(() => {});
    });
    await expect(failing).rejects.toMatchObject({ status: 503, code: "gguf_host_tab_failed", message: expect.stringContaining("SyntaxError") });
  });

  it("what the tab relays that is not a report (null, a number, a string, an array, another type) is ignored: nothing throws in the shared worker, and the relay goes on", async () => {
    const thrown: unknown[] = [];
    const record = (error: unknown) => thrown.push(error);
    process.on("uncaughtException", record);
    try {
      const { tab, started } = tabThatRecords();
      const seen = await loadWithTabWorker(new TabWorkerLease(tab, "tiny"), async () => {
        const worker = new (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker!("data:text/javascript,");
        const seen: unknown[] = [];
        const answered = new Promise<void>((resolve) => (worker.onmessage = (event) => (seen.push(event.data), resolve())));
        const { port } = await started;
        for (const report of [null, 42, "text", [1, 2], { type: "bogus" }, { type: "error", message: { not: "text" } }]) port.postMessage(report);
        port.postMessage({ type: "message", data: "ok" });
        await answered;
        worker.terminate();
        port.close();
        return seen;
      });
      expect(seen).toEqual(["ok"]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(thrown).toEqual([]);
    } finally {
      process.off("uncaughtException", record);
    }
  });

  it("no tab can host (none connected, or none offers): a 503 that says what to use", () => {
    const refusal = () => {
      try {
        leaseHostingTab("tiny");
      } catch (error) {
        return error;
      }
      return null;
    };
    expect(refusal()).toMatchObject({ status: 503, code: "wllama_needs_worker", param: "model" });
    offerHostingTabs(() => null);
    expect((refusal() as Error).message).toMatch(/worker: true/);
  });
});
