/**
 * Embeddings with the host in the default worker (scripted engine), in real
 * Chromium: client.embeddings.create, the unchanged OpenAI SDK v7 on
 * client.fetch (its default base64 path), errors and abort across the worker.
 */
import { afterEach, describe, expect, it } from "vitest";
import OpenAI from "openai-v7";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, hashedBagOfWords } from "../../src/testing.js";

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

function setup(options: { embedDelayMs?: number } = {}) {
  const client = createClient({ engine: createScriptedEngine({ replies: ["Answer one.", "Answer two.", "Answer three."], embedDelayMs: options.embedDelayMs }) });
  clients.push(client);
  return client;
}

describe("embeddings through the worker", () => {
  it("vectors, chat interleaved, and models.list marks embedding models", async () => {
    const client = setup();
    const r = await client.embeddings.create({ model: "snowflake-arctic-embed-s", input: ["alpha beta", "gamma"] });
    expect(r.data.map((d) => d.embedding)).toEqual([hashedBagOfWords("alpha beta", 384), hashedBagOfWords("gamma", 384)]);
    const chat = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] });
    expect(chat.choices[0].message.content).toBe("Answer one.");
    const again = await client.embeddings.create({ model: "snowflake-arctic-embed-s", input: "alpha beta", encoding_format: "base64" });
    expect(typeof again.data[0].embedding).toBe("string");
    const list = await client.models.list();
    expect(list.data.filter((m) => m.type === "embedding")).toHaveLength(4);
  });

  it("openai v7 embeddings.create, default (base64 decoded by the SDK) and float", async () => {
    const client = setup();
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", dangerouslyAllowBrowser: true, fetch: client.fetch });
    const text = "the quick brown fox";
    const decoded = await openai.embeddings.create({ model: "Snowflake/snowflake-arctic-embed-s", input: [text] });
    expect(decoded.data[0].embedding).toEqual(Array.from(Float32Array.from(hashedBagOfWords(text, 384))));
    const floats = await openai.embeddings.create({ model: "Snowflake/snowflake-arctic-embed-s", input: text, encoding_format: "float" });
    expect(floats.data[0].embedding).toEqual(hashedBagOfWords(text, 384));
    const bad = await openai.embeddings.create({ model: "snowflake-arctic-embed-s", input: ["a", "b", ""] }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, param: "input[2]" });
  });

  it("abort across the worker stops between batches; the next request runs", async () => {
    const client = setup({ embedDelayMs: 40 });
    // Worker started and model loaded first, so the timing below is the batches' alone (10 × 40 ms uncancelled).
    await client.embeddings.create({ model: "snowflake-arctic-embed-s-b4", input: ["warm"] });
    const controller = new AbortController();
    const input = Array.from({ length: 40 }, (_, i) => `passage ${i}`);
    const pending = client.embeddings.create({ model: "snowflake-arctic-embed-s-b4", input }, { signal: controller.signal });
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(10 * 40);
    const after = await client.embeddings.create({ model: "snowflake-arctic-embed-s-b4", input: ["after"] });
    expect(after.data).toHaveLength(1);
  });
});
