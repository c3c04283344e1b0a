/**
 * A tab leaving the shared worker where Web Locks are missing: an insecure
 * context (a page on http://192.168.x.x) has SharedWorker but no
 * navigator.locks, so the worker cannot wait on the tab's lock. The tab says
 * goodbye on its port instead (TAB_GOODBYE, worker/protocol.ts) when its page
 * unloads for good or its client is terminated, and the worker stops its
 * requests and stops counting it, or asking it to host llama.cpp's Worker,
 * and releases the comlink proxies the tab sent it.
 * Node has no Web Locks either, so SharedHost runs here as it does there.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as Comlink from "comlink";
import { EngineHost, createScriptedEngine } from "../../src/testing.js";
import { SharedHost } from "../../src/worker/shared-host.js";
import { leaseHostingTab, offerHostingTabs } from "../../src/engine/wllama/wllama-tab-host.js";
import { TAB_GOODBYE, type PortMessage, type WorkerApi } from "../../src/worker/protocol.js";
import { sharedLink } from "../../src/client/worker-link.js";

const opened: MessagePort[] = [];
afterEach(() => {
  for (const port of opened.splice(0)) port.close();
  offerHostingTabs(null);
});

const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");

/** A tab of `shared`, configured as the client does (offering to host Workers when `hosts`). */
async function tabOf(shared: SharedHost, hosts = false): Promise<{ port: MessagePort; api: Comlink.Remote<WorkerApi> }> {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  shared.connect(port2);
  const api = Comlink.wrap<WorkerApi>(port1);
  const hostWorker = hosts ? Comlink.proxy(() => undefined) : undefined;
  await api.configure({ engine: { kind: "scripted", replies: ["hi"] } }, undefined, undefined, undefined, hostWorker);
  return { port: port1, api };
}

/** A stream's port as the page holds it: what arrives, and its last message (end or error). */
function requestPort(): { port: MessagePort; chunks: () => number; last: Promise<PortMessage> } {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  let chunks = 0;
  const last = new Promise<PortMessage>((resolve) => {
    port1.onmessage = (event: MessageEvent<PortMessage>) => {
      if (event.data.type === "chunks") chunks++;
      else resolve(event.data);
    };
  });
  return { port: port2, chunks: () => chunks, last };
}

async function until(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("a tab leaving the shared worker without Web Locks", () => {
  it("its goodbye stops its running stream, and it no longer counts or hosts; the other tab goes on", async () => {
    // 400 tokens at 10 ms: the long reply would run 4 s more unless stopped.
    const shared = new SharedHost(new EngineHost({ engine: createScriptedEngine({ replies: [words("long-", 400), "after"], tokenDelayMs: 10 }) }));
    const a = await tabOf(shared, true);
    const b = await tabOf(shared);
    expect(shared.tabCount).toBe(2);
    const request = requestPort();
    await a.api.streamChatCompletion({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "long" }] } as never, Comlink.transfer(request.port, [request.port]));
    await until(() => request.chunks() >= 2);

    a.port.postMessage(TAB_GOODBYE);
    await request.last;
    expect(shared.tabCount).toBe(1);
    expect(await b.api.workerInfo()).toEqual({ worker: "shared", tabs: 1 });
    // It offered to host llama.cpp's Worker, and no other tab does: none is left to ask.
    expect(() => leaseHostingTab("m")).toThrow(expect.objectContaining({ code: "wllama_needs_worker" }));
    const nextPort = requestPort().port;
    const next = await b.api.createChatCompletion({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "next" }] } as never, Comlink.transfer(nextPort, [nextPort]));
    expect((next as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe("after");
    // The long reply stopped when its tab left: it did not run its 400 tokens before the other tab's request.
    expect((await b.api.stats()).generated_tokens).toBeLessThan(100);
  });

  it("what the tab sent is let go of: its callbacks' comlink proxies (progress, store errors, Worker hosting) are released", async () => {
    const shared = new SharedHost(new EngineHost({ engine: createScriptedEngine({ replies: ["hi"] }) }));
    const { port1, port2 } = new MessageChannel();
    opened.push(port1, port2);
    shared.connect(port2);
    // comlink calls a proxied object's finalizer on the tab's side when the worker releases its proxy.
    const released: string[] = [];
    const callback = (name: string) => Comlink.proxy(Object.assign(() => undefined, { [Comlink.finalizer]: () => released.push(name) }));
    const api = Comlink.wrap<WorkerApi>(port1);
    await api.configure({ engine: { kind: "scripted", replies: ["hi"] } }, callback("onProgress"), undefined, callback("onStoreError"), callback("hostWorker"));
    port1.postMessage(TAB_GOODBYE);
    await until(() => released.length === 3, 2000).catch(() => undefined);
    expect(released.sort()).toEqual(["hostWorker", "onProgress", "onStoreError"]);
  });

  describe("the tab's side", () => {
    const globals = globalThis as unknown as { addEventListener?: unknown; removeEventListener?: unknown };
    afterEach(() => {
      delete globals.addEventListener;
      delete globals.removeEventListener;
    });

    /** A page global to dispatch `pagehide` on, and the port the worker would hear the tab on. */
    function page(): { hide(persisted: boolean): void; link: ReturnType<typeof sharedLink>; heard: unknown[] } {
      const target = new EventTarget();
      globals.addEventListener = target.addEventListener.bind(target);
      globals.removeEventListener = target.removeEventListener.bind(target);
      const { port1, port2 } = new MessageChannel();
      opened.push(port1, port2);
      const heard: unknown[] = [];
      port2.onmessage = (event) => heard.push(event.data);
      const link = sharedLink({ port: port1, addEventListener() {} } as unknown as SharedWorker);
      const hide = (persisted: boolean) => target.dispatchEvent(Object.assign(new Event("pagehide"), { persisted }));
      return { hide, link, heard };
    }
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

    it("says goodbye when its page unloads for good, not when it goes into the back/forward cache (it may come back)", async () => {
      const { hide, heard } = page();
      hide(true);
      await settle();
      expect(heard).toEqual([]);
      hide(false);
      await settle();
      expect(heard).toEqual([TAB_GOODBYE]);
    });

    it("says goodbye when its client is terminated (the link closes)", async () => {
      const { link, heard } = page();
      link.close();
      await settle();
      expect(heard).toEqual([TAB_GOODBYE]);
    });
  });
});
