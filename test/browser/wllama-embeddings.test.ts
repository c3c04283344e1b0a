/**
 * Embeddings for a GGUF embedding model: the wllama engine (@wllama/wllama
 * 3.8.1, the real llama.cpp) through createClient's dedicated worker in
 * headless Chromium, on the tiny generated GGUF declaring mean pooling
 * (`llama.pooling_type` 1, served as tiny-embed.gguf). The oracle is llama.cpp
 * itself, in this page, loaded for embeddings on the same file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-ignore -- wllama's package `main` is missing; Vite resolves its ESM build.
import { Wllama } from "@wllama/wllama";
import { createClient, type Client } from "../../src/index.js";
import type { WllamaEmbeddings, WllamaInstance, WllamaModule } from "../../src/engine/wllama/wllama-api.js";
import { server, tinyRecord, wasm } from "./support/tiny-gguf.js";

const embedModel = "tiny-gguf-embed";
const chatModel = "tiny-gguf-embed-chat";
const inputs = ["hello world", "the water is long", "you can see people"];

let client: Client;
let direct: WllamaInstance;

beforeAll(async () => {
  client = createClient({ models: [tinyRecord(embedModel, { model: `${server}/m/${embedModel}/tiny-embed.gguf`, model_type: 1 }), tinyRecord(chatModel)] });
  direct = new (Wllama as WllamaModule["Wllama"])({ default: wasm }, { suppressNativeLog: true, logger: { debug: () => {}, log: () => {}, warn: console.warn, error: console.error } });
  await direct.loadModel([await (await fetch(`${server}/m/direct/tiny-embed.gguf`)).blob()], { n_ctx: 2048, embeddings: true });
});
afterAll(async () => {
  client?.terminate();
  await direct?.exit();
});

const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

describe("embeddings on a GGUF embedding model", () => {
  it("one vector per input, in order, equal to llama.cpp's own (pooled, normalized), with its token count", async () => {
    const r = await client.embeddings.create({ model: embedModel, input: inputs });
    // llama.cpp's own, one input at a time (wllama 3.8.1 given an array embeds its first input only).
    const want: WllamaEmbeddings[] = [];
    for (const input of inputs) want.push(await direct.createEmbedding({ input: [input] }));
    expect(r.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(r.usage.prompt_tokens).toBe(want.reduce((sum, w) => sum + w.usage.prompt_tokens, 0));
    r.data.forEach((d, i) => {
      const vector = d.embedding as number[];
      const expected = want[i].data[0].embedding as number[];
      // The tiny model's hidden size.
      expect(vector.length).toBe(64);
      expect(norm(vector)).toBeCloseTo(1, 4);
      vector.forEach((x, k) => expect(x).toBeCloseTo(expected[k], 5));
    });
    // Different texts, different vectors (else the pooling proved nothing).
    expect(r.data[0].embedding).not.toEqual(r.data[1].embedding);
  });

  it("base64 encoding and a chat model beside it: each answers as its own engine", async () => {
    const r = await client.embeddings.create({ model: embedModel, input: "hello world", encoding_format: "base64" });
    const floats = new Float32Array(Uint8Array.from(atob(r.data[0].embedding as unknown as string), (c) => c.charCodeAt(0)).buffer);
    const want = (await direct.createEmbedding({ input: "hello world" } as never)).data[0].embedding as number[];
    expect(floats.length).toBe(64);
    floats.forEach((x, k) => expect(x).toBeCloseTo(want[k], 5));
    const chat = await client.chat.completions.create({ model: chatModel, messages: [{ role: "user", content: "hello world" }], max_tokens: 4, temperature: 0 });
    expect(chat.usage.completion_tokens).toBeGreaterThan(0);
    // The chat record does not embed: the host's 400, as for any chat model.
    await expect(client.embeddings.create({ model: chatModel, input: "hello" })).rejects.toMatchObject({ status: 400, code: "model_not_embedding" });
  });

  it("a GGUF that declares no pooling cannot embed: a 400 that says what the file lacks", async () => {
    const unpooled = createClient({ models: [tinyRecord("tiny-gguf-embed-unpooled", { model_type: 1 })] });
    try {
      const error = await unpooled.embeddings.create({ model: "tiny-gguf-embed-unpooled", input: "hello world" }).catch((e) => e);
      expect(error).toMatchObject({ status: 400, code: "embeddings_unsupported", param: "model" });
      expect(error.message).toContain("pooling_type");
    } finally {
      unpooled.terminate();
    }
  });
});
