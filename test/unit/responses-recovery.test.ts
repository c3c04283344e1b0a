/**
 * Recovery of responses whose worker stopped mid-way starts on the Responses
 * face's first use, not when the host is built: a host that serves only chat
 * never reads the response store, and the first Responses call (retrieve,
 * list) still resumes or ends what was interrupted. Node has no Web Locks,
 * so this file gives it a minimal lock manager (owner-lock.ts's interface):
 * a lock is held until its callback's promise settles.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EngineHost, createScriptedEngine } from "../../src/testing.js";
import { MemoryResponseStore } from "../../src/store/memory-response-store.js";
import type { StoredResponse } from "../../src/store/response-store.js";
import type { ResponseObject } from "../../src/index.js";

const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
/** The lock a host that stopped held (no one holds it now). */
const GONE = "webgpu-openai:response-host:gone";

function fakeLocks() {
  const held = new Set<string>();
  return {
    async request(name: string, options: { ifAvailable?: boolean }, callback: (lock: unknown) => unknown) {
      if (options.ifAvailable && held.has(name)) return callback(null);
      held.add(name);
      try {
        return await callback({ name });
      } finally {
        held.delete(name);
      }
    },
    async query() {
      return { held: [...held].map((name) => ({ name })) };
    },
  };
}

/** A memory store that counts its reads of the whole list (what recovery starts with). */
class CountingStore extends MemoryResponseStore {
  lists = 0;
  override list() {
    this.lists++;
    return super.list();
  }
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("timed out waiting");
}

/** A response as a stopped worker left it: unfinished, journaled with its request and the stopped host as owner. */
async function interrupted(store: MemoryResponseStore, body: { model: string; input: string; background?: boolean; tools?: unknown[] }): Promise<string> {
  const made = await new EngineHost({ engine: createScriptedEngine({ replies: ["x"] }), responseStore: new MemoryResponseStore() }).createResponse({ model: body.model, input: body.input });
  const response: ResponseObject = { ...made, status: body.background ? "queued" : "in_progress", background: body.background === true, output: [], usage: null, completed_at: null };
  delete response.x_webgpu;
  const entry: StoredResponse = { response, inputItems: [], history: [], journal: { body, owner: GONE } };
  await store.put(entry);
  return response.id;
}

describe("recovery of interrupted responses", () => {
  beforeEach(() => vi.stubGlobal("navigator", { locks: fakeLocks() }));
  afterEach(() => vi.unstubAllGlobals());

  it("does not start when the host is built: serving chat reads no stored response; the first retrieve ends a stored stream incomplete", async () => {
    const store = new CountingStore();
    const id = await interrupted(store, { model: QWEN25, input: "count" });
    const host = new EngineHost({ engine: createScriptedEngine({ replies: ["hello"] }), responseStore: store });
    const chat = await host.createChatCompletion({ model: QWEN25, messages: [{ role: "user", content: "hi" }] });
    expect(chat.choices[0].message.content).toBe("hello");
    expect(store.lists).toBe(0);
    expect((await store.get(id))?.response.status).toBe("in_progress");

    await host.retrieveResponse(id);
    const ended = await until(() => host.retrieveResponse(id), (r) => r.status !== "in_progress");
    expect(ended).toMatchObject({ status: "incomplete", incomplete_details: { reason: "interrupted" }, error: { code: "interrupted" } });
    expect(store.lists).toBe(1);
  });

  it("a background response is resumed by the first list and completes; later calls do not start recovery again", async () => {
    const store = new CountingStore();
    const id = await interrupted(store, { model: QWEN25, input: "count", background: true });
    const host = new EngineHost({ engine: createScriptedEngine({ replies: ["one two three"] }), responseStore: store });
    expect((await host.listResponses()).data.map((r) => r.id)).toEqual([id]);
    const done = await until(() => host.retrieveResponse(id), (r) => r.status === "completed");
    expect(done.output).toMatchObject([{ type: "message", content: [{ type: "output_text", text: "one two three" }] }]);
    await host.listResponses();
    expect(store.lists).toBe(1 + 2); // recovery once, and the two list calls
  });

  it("a background response with an mcp tool is not started over (its calls may have run): it ends incomplete and says why", async () => {
    const store = new CountingStore();
    const id = await interrupted(store, { model: QWEN25, input: "count", background: true, tools: [{ type: "mcp", server_label: "s", server_url: "http://127.0.0.1:9/mcp" }] });
    const engine = createScriptedEngine({ replies: ["one two three"] });
    const host = new EngineHost({ engine, responseStore: store });
    await host.listResponses();
    const ended = await until(() => host.retrieveResponse(id), (r) => r.status !== "queued" && r.status !== "in_progress");
    expect(ended).toMatchObject({ status: "incomplete", error: { code: "resume_impossible" } });
    expect(ended.error!.message).toMatch(/uses `mcp` tools/);
    expect(engine.requests).toHaveLength(0);
  });
});
