/** client.embeddings.create through createClient + the scripted engine: shape, every field, bad values, batching, residency. */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine, hashedBagOfWords } from "../../src/testing.js";
import { base64ToFloats } from "../../src/protocol/embedding-base64.js";
import { refusal } from "./support/client.js";

const EMBED = "snowflake-arctic-embed-s";

function setup(options: Parameters<typeof createScriptedEngine>[0] = { replies: () => "Hello." }) {
  const engine = createScriptedEngine(options);
  const client = createClient({ engine, worker: false });
  return { engine, client };
}

const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i], 0);

describe("embeddings: response shape", () => {
  it("a string → one unit vector of the model's size, model echoed as sent, usage counted", async () => {
    const { client } = setup();
    const response = await client.embeddings.create({ model: EMBED, input: "The cat sat on the mat." });
    expect(response).toMatchObject({ object: "list", model: EMBED, data: [{ object: "embedding", index: 0 }] });
    const vector = response.data[0].embedding as number[];
    expect(vector).toHaveLength(384);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 6);
    expect(response.usage.prompt_tokens).toBeGreaterThan(0);
    expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens);
  });

  it("an array → one vector per input, indexed in order; same text → same vector; shared words → closer", async () => {
    const { client } = setup();
    const texts = ["the cat sat on the mat", "a cat on a mat", "quarterly revenue grew nine percent", "the cat sat on the mat"];
    const { data } = await client.embeddings.create({ model: EMBED, input: texts });
    expect(data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    const [a, b, c, d] = data.map((x) => x.embedding as number[]);
    expect(d).toEqual(a);
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c));
    expect(a).toEqual(hashedBagOfWords(texts[0], 384));
  });

  it("the -m model is 768-dimensional; a vendor id and the exact id resolve", async () => {
    const { client } = setup();
    const m = await client.embeddings.create({ model: "snowflake-arctic-embed-m", input: "x" });
    expect((m.data[0].embedding as number[]).length).toBe(768);
    for (const model of ["Snowflake/snowflake-arctic-embed-s", "snowflake-arctic-embed-s-q0f32-MLC-b32", "snowflake-arctic-embed-s-b4"]) {
      const r = await client.embeddings.create({ model, input: "x" });
      expect(r.model).toBe(model);
      expect((r.data[0].embedding as number[]).length).toBe(384);
    }
  });

  it("encoding_format base64: little-endian float32 bytes that decode to the float vectors", async () => {
    const { client } = setup();
    const input = ["first passage", "second one"];
    const floats = await client.embeddings.create({ model: EMBED, input, encoding_format: "float" });
    const b64 = await client.embeddings.create({ model: EMBED, input, encoding_format: "base64" });
    for (let i = 0; i < 2; i++) {
      const text = b64.data[i].embedding as string;
      expect(typeof text).toBe("string");
      const bytes = Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
      expect(bytes.length).toBe(384 * 4);
      const expected = Float32Array.from(floats.data[i].embedding as number[]);
      expect(Array.from(new Float32Array(bytes.buffer))).toEqual(Array.from(expected));
      expect(base64ToFloats(text)).toEqual(Array.from(expected));
    }
  });

  it("a custom embed function replaces the default", async () => {
    const { client } = setup({ replies: ["x"], embed: (text) => [text.length, 1, 0] });
    const { data } = await client.embeddings.create({ model: EMBED, input: ["abc", "hello"] });
    expect(data.map((d) => d.embedding)).toEqual([[3, 1, 0], [5, 1, 0]]);
  });

  it("dimensions equal to the model's size is accepted; user is accepted", async () => {
    const { client } = setup();
    const r = await client.embeddings.create({ model: EMBED, input: "x", dimensions: 384, user: "u-1" });
    expect((r.data[0].embedding as number[]).length).toBe(384);
  });
});

describe("embeddings: bad values → 400 naming the param", () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ["no model", { input: "x" }, "model", /required/],
    ["no input", { model: EMBED }, "input", /required/],
    ["empty string", { model: EMBED, input: "" }, "input", /empty/],
    ["empty array", { model: EMBED, input: [] }, "input", /empty/],
    ["an empty string in the list", { model: EMBED, input: ["a", "b", "", "d"] }, "input[2]", /empty/],
    ["a non-string item", { model: EMBED, input: ["a", 5, "c"] }, "input[1]", /string/],
    ["a null item", { model: EMBED, input: ["a", null] }, "input[1]", /string/],
    ["too many inputs", { model: EMBED, input: Array.from({ length: 2049 }, () => "x") }, "input", /2048/],
    ["encoding_format", { model: EMBED, input: "x", encoding_format: "int8" }, "encoding_format", /float.*base64/],
    ["dimensions not an integer", { model: EMBED, input: "x", dimensions: 1.5 }, "dimensions", /positive integer/],
    ["dimensions other than the model's", { model: EMBED, input: "x", dimensions: 256 }, "dimensions", /384/],
    ["user not a string", { model: EMBED, input: "x", user: 3 }, "user", /string/],
    ["token ids on an engine that takes text only", { model: EMBED, input: [[1, 2, 3]] }, "input", /text only/],
    ["a bad token id", { model: EMBED, input: [1, -2] }, "input[1]", /token id/],
  ];
  for (const [name, body, param, message] of cases) {
    it(name, async () => {
      const { client } = setup();
      const error = await refusal(client.embeddings.create(body as never));
      expect(error).toMatchObject({ status: 400, param });
      expect(error.message).toMatch(message);
    });
  }

  it("an input longer than the model's window → 400 naming its index (across batches)", async () => {
    const { client } = setup();
    const long = Array.from({ length: 600 }, (_, i) => `w${i}`).join(" ");
    const input = ["a", "b", "c", "d", "e", long];
    const error = await refusal(client.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b4", input }));
    expect(error).toMatchObject({ status: 400, param: "input[5]", code: "context_length_exceeded" });
    expect(error.message).toMatch(/512 tokens/);
  });

  it("every input is checked before the first batch runs: a request that will fail embeds nothing (no GPU time)", async () => {
    const { client, engine } = setup();
    const long = Array.from({ length: 600 }, (_, i) => `w${i}`).join(" ");
    // b4: without the up-front check, input[0..3] would be embedded as a first batch before input[5] fails.
    const error = await refusal(client.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b4", input: ["short", "b", "c", "d", "e", long] }));
    expect(error).toMatchObject({ status: 400, param: "input[5]", code: "context_length_exceeded" });
    expect(engine.embeds).toHaveLength(0);
    // The model is loaded (the window is the loaded model's), and a good request then runs as usual.
    const ok = await client.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b4", input: ["short", "b", "c", "d", "e"] });
    expect(ok.data).toHaveLength(5);
    expect(engine.embeds.map((e) => e.input.length)).toEqual([4, 1]);
  });

  it("a chat model named for embeddings → 400 listing the models that embed", async () => {
    const { client } = setup();
    const error = await refusal(client.embeddings.create({ model: "Qwen3-0.6B", input: "x" }));
    expect(error).toMatchObject({ status: 400, param: "model", code: "model_not_embedding" });
    expect(error.message).toMatch(/snowflake-arctic-embed-s-q0f32-MLC-b4/);
  });

  it("an embedding model named for chat → 400 saying where it belongs", async () => {
    const { client } = setup();
    const error = await refusal(client.chat.completions.create({ model: EMBED, messages: [{ role: "user", content: "hi" }] }));
    expect(error).toMatchObject({ status: 400, param: "model", code: "model_not_chat" });
    expect(error.message).toMatch(/embeddings/);
  });

  it("an unknown model → 404", async () => {
    const { client } = setup();
    expect(await refusal(client.embeddings.create({ model: "nope-embed", input: "x" }))).toMatchObject({ status: 404, param: "model" });
  });
});

describe("embeddings: batching, abort, residency", () => {
  it("a request larger than the compiled batch is split in order and re-joined (b4: 10 inputs → 4+4+2)", async () => {
    const { client, engine } = setup();
    const input = Array.from({ length: 10 }, (_, i) => `passage number ${i}`);
    const { data } = await client.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b4", input });
    expect(engine.embeds.map((b) => [b.firstIndex, b.input.length])).toEqual([[0, 4], [4, 4], [8, 2]]);
    expect(engine.embeds.flatMap((b) => b.input)).toEqual(input);
    data.forEach((d, i) => expect(d.embedding).toEqual(hashedBagOfWords(input[i], 384)));
  });

  it("b32 takes 40 inputs in two batches", async () => {
    const { client, engine } = setup();
    await client.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b32", input: Array.from({ length: 40 }, (_, i) => `t${i}`) });
    expect(engine.embeds.map((b) => b.input.length)).toEqual([32, 8]);
  });

  it("abort stops between batches", async () => {
    const { client, engine } = setup({ replies: ["x"], embedDelayMs: 30 });
    const controller = new AbortController();
    const pending = client.embeddings.create({ model: "snowflake-arctic-embed-s-b4", input: Array.from({ length: 40 }, (_, i) => `t${i}`) }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 45);
    const error = await refusal(pending);
    expect(error.name).toBe("AbortError");
    expect(engine.embeds.length).toBeGreaterThanOrEqual(1);
    expect(engine.embeds.length).toBeLessThan(10);
  });

  it("chat and embeddings interleaved: each model loads once and stays", async () => {
    const { client, engine } = setup({ replies: () => "Sure." });
    for (let round = 0; round < 3; round++) {
      await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: `q${round}` }] });
      await client.embeddings.create({ model: EMBED, input: [`doc ${round}`] });
    }
    expect(engine.loads).toEqual(["Qwen3-0.6B-q4f32_1-MLC", "snowflake-arctic-embed-s-q0f32-MLC-b4"]);
    expect(engine.loadedModel).toBe("Qwen3-0.6B-q4f32_1-MLC");
    expect(engine.loadedEmbeddingModel).toBe("snowflake-arctic-embed-s-q0f32-MLC-b4");
  });

  it("models.list() marks embedding models; retrieve works by alias", async () => {
    const { client } = setup();
    const list = await client.models.list();
    const embedding = list.data.filter((m) => m.type === "embedding");
    expect(embedding.map((m) => m.id).sort()).toEqual([
      "snowflake-arctic-embed-m-q0f32-MLC-b32",
      "snowflake-arctic-embed-m-q0f32-MLC-b4",
      "snowflake-arctic-embed-s-q0f32-MLC-b32",
      "snowflake-arctic-embed-s-q0f32-MLC-b4",
    ]);
    expect(embedding.every((m) => m.capabilities.embeddings && !m.capabilities.tools && m.context_window === 512)).toBe(true);
    expect(list.data.find((m) => m.id === "Qwen3-0.6B-q4f32_1-MLC")).toMatchObject({ type: "chat", capabilities: { embeddings: false } });
    expect(await client.models.retrieve("Snowflake/snowflake-arctic-embed-m")).toMatchObject({ type: "embedding", dimensions: 768 });
  });

  it("models.load() preloads an embedding model next to the chat model", async () => {
    const { client, engine } = setup();
    await client.models.load("Qwen3-0.6B");
    await client.models.load(EMBED);
    await client.embeddings.create({ model: EMBED, input: "x" });
    await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] });
    expect(engine.loads).toHaveLength(2);
  });

  it("load progress for an embedding model reaches models.load's onProgress and the client's, as for chat", async () => {
    const seen: number[] = [];
    const own: number[] = [];
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }), onProgress: (p) => seen.push(p.fraction) });
    await client.models.load("Snowflake/snowflake-arctic-embed-s", { onProgress: (p) => own.push(p.fraction) });
    expect(own).toEqual([0.25, 0.5, 0.75, 1]);
    expect(seen).toEqual(own);
  });

  it("a scripted catalog record of model_type embedding embeds with no replies", async () => {
    const client = createClient({
      worker: false,
      engine: createScriptedEngine({ replies: ["x"] }),
      models: [{ model: "http://127.0.0.1/none/", model_id: "my-embedder", model_lib: "http://127.0.0.1/none.wasm", model_type: 1, embedding_dimensions: 16, engine: { kind: "scripted" } as never }],
    });
    const { data } = await client.embeddings.create({ model: "my-embedder", input: ["alpha beta", "gamma"] });
    expect(data.map((d) => (d.embedding as number[]).length)).toEqual([16, 16]);
  });
});

describe("POST /embeddings on client.fetch", () => {
  const url = "http://localhost.webgpu/v1/embeddings";
  it("answers JSON with a request id under any base URL; errors are OpenAI error bodies", async () => {
    const { client } = setup();
    const ok = await client.fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: EMBED, input: ["a", "b"] }) });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/json");
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/);
    expect((await ok.json()).data).toHaveLength(2);
    const other = await client.fetch("https://api.example.test/openai/embeddings", { method: "POST", body: JSON.stringify({ model: EMBED, input: "a" }) });
    expect(other.status).toBe(200);

    const bad = await client.fetch(url, { method: "POST", body: JSON.stringify({ model: EMBED, input: ["a", ""] }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ type: "invalid_request_error", param: "input[1]", code: "empty_input" });
    const notJson = await client.fetch(url, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe("invalid_json");
  });

  it("an aborted signal rejects the fetch with its reason, as a native fetch does", async () => {
    const { client } = setup({ replies: ["x"], embedDelayMs: 30 });
    const controller = new AbortController();
    const pending = client.fetch(url, { method: "POST", body: JSON.stringify({ model: "snowflake-arctic-embed-s-b4", input: Array.from({ length: 20 }, (_, i) => `t${i}`) }), signal: controller.signal });
    setTimeout(() => controller.abort(new Error("user left")), 40);
    await expect(pending).rejects.toThrow("user left");
  });
});
