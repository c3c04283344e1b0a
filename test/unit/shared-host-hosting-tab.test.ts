/**
 * Which connected tab the shared worker asks to start llama.cpp's Worker
 * (worker/shared-host.ts → engine/wllama/wllama-tab-host.ts), over real
 * comlink ports as the tabs connect: the longest-connected tab that offers,
 * except one that already failed to start a Worker (its page's CSP refuses
 * blob: workers, say): a tab that cannot must not fail every GGUF load of the
 * origin while another connected tab could host it.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as Comlink from "comlink";
import { EngineHost, createScriptedEngine } from "../../src/testing.js";
import { SharedHost } from "../../src/worker/shared-host.js";
import { leaseHostingTab, offerHostingTabs } from "../../src/engine/wllama/wllama-tab-host.js";
import type { TabWorkerStarter, WorkerApi } from "../../src/worker/protocol.js";

const opened: MessagePort[] = [];
afterEach(() => {
  for (const port of opened.splice(0)) port.close();
  offerHostingTabs(null);
});

/** A tab of `shared` that offers `hostWorker`, configured as the client does. */
async function tabOf(shared: SharedHost, hostWorker: TabWorkerStarter): Promise<void> {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  shared.connect(port2);
  const api = Comlink.wrap<WorkerApi>(port1);
  await api.configure({ engine: { kind: "scripted", replies: ["hi"] } } as never, undefined, undefined, undefined, Comlink.proxy(hostWorker));
}

async function askToStart(modelId: string): Promise<string> {
  const lease = leaseHostingTab(modelId)!;
  const { port1, port2 } = new MessageChannel();
  opened.push(port1);
  try {
    await lease.tab.startWorker(new Blob(["self.onmessage = () => {}"]), port2, "module");
    return "started";
  } catch (error) {
    return (error as Error).message;
  }
}

describe("the tab that hosts llama.cpp's Worker for the shared worker", () => {
  it("one that failed to start a Worker is passed over for the next connected tab", async () => {
    const shared = new SharedHost(new EngineHost({ engine: createScriptedEngine({ replies: ["hi"] }) }));
    const asked: string[] = [];
    await tabOf(shared, (_script, port) => {
      asked.push("first");
      port.close();
      throw new Error("Refused to create a worker from 'blob:' (CSP worker-src 'self')");
    });
    await tabOf(shared, (_script, port) => {
      asked.push("second");
      port.close();
    });
    expect(await askToStart("m")).toMatch(/CSP/);
    expect(await askToStart("m")).toBe("started");
    expect(await askToStart("m")).toBe("started");
    expect(asked).toEqual(["first", "second", "second"]);
  });

  it("a tab that failed is still asked where no other tab offers", async () => {
    const shared = new SharedHost(new EngineHost({ engine: createScriptedEngine({ replies: ["hi"] }) }));
    let calls = 0;
    await tabOf(shared, (_script, port) => {
      calls++;
      port.close();
      throw new Error("Refused (CSP)");
    });
    expect(await askToStart("m")).toMatch(/CSP/);
    expect(await askToStart("m")).toMatch(/CSP/);
    expect(calls).toBe(2);
  });
});
