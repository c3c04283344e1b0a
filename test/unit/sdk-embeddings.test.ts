/**
 * Real clients, unchanged, on `client.fetch` for POST /embeddings: the OpenAI
 * SDK v6 (float, and its default path that asks for base64 and decodes it),
 * the AI SDK's embed/embedMany (`@ai-sdk/openai-compatible`), LangChain's
 * OpenAIEmbeddings. Vectors are checked against the scripted default.
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { embed, embedMany } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { OpenAIEmbeddings } from "@langchain/openai";
import { createClient } from "../../src/index.js";
import { createScriptedEngine, hashedBagOfWords } from "../../src/testing.js";

const BASE = "http://localhost.webgpu/v1";
const MODEL = "Snowflake/snowflake-arctic-embed-s";

function setup() {
  const engine = createScriptedEngine({ replies: () => "ok" });
  const client = createClient({ engine, worker: false });
  const bodies: Array<Record<string, unknown>> = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return client.fetch(url, init);
  };
  return { client, engine, bodies, fetch };
}

/** What the client decodes is float32: compare against the default vector rounded the same way. */
const expected = (text: string) => Array.from(Float32Array.from(hashedBagOfWords(text, 384)));

describe("OpenAI SDK v6 embeddings.create", () => {
  it("default (the SDK asks base64 and decodes it): float arrays equal to the model's vectors", async () => {
    const { fetch, bodies } = setup();
    const openai = new OpenAI({ baseURL: BASE, apiKey: "local", fetch });
    const response = await openai.embeddings.create({ model: MODEL, input: ["the cat sat", "a dog ran"] });
    expect(bodies[0].encoding_format).toBe("base64");
    expect(response.model).toBe(MODEL);
    expect(response.data.map((d) => d.index)).toEqual([0, 1]);
    expect(response.data[0].embedding).toEqual(expected("the cat sat"));
    expect(response.data[1].embedding).toEqual(expected("a dog ran"));
    expect(response.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
  });

  it("encoding_format float: numbers as sent", async () => {
    const { fetch, bodies } = setup();
    const openai = new OpenAI({ baseURL: BASE, apiKey: "local", fetch });
    const response = await openai.embeddings.create({ model: MODEL, input: "hello world", encoding_format: "float" });
    expect(bodies[0].encoding_format).toBe("float");
    expect(response.data[0].embedding).toEqual(hashedBagOfWords("hello world", 384));
  });

  it("a bad input is a BadRequestError naming input[i], not retried", async () => {
    const { fetch, bodies } = setup();
    const openai = new OpenAI({ baseURL: BASE, apiKey: "local", fetch });
    const error = await openai.embeddings.create({ model: MODEL, input: ["ok", ""] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: "input[1]" });
    expect(bodies).toHaveLength(1);
    const wrongModel = await openai.embeddings.create({ model: "Qwen3-0.6B", input: "x" }).catch((e: unknown) => e);
    expect(wrongModel).toMatchObject({ status: 400, param: "model", code: "model_not_embedding" });
  });
});

describe("AI SDK embed / embedMany (@ai-sdk/openai-compatible)", () => {
  it("embed and embedMany return the model's vectors in order", async () => {
    const { fetch } = setup();
    const provider = createOpenAICompatible({ name: "local", baseURL: BASE, fetch });
    const model = provider.textEmbeddingModel(MODEL);
    const one = await embed({ model, value: "sunny day at the beach" });
    expect(one.embedding).toEqual(hashedBagOfWords("sunny day at the beach", 384));
    const texts = Array.from({ length: 9 }, (_, i) => `passage ${i} about topic ${i % 3}`);
    const many = await embedMany({ model, values: texts });
    expect(many.embeddings).toEqual(texts.map((t) => hashedBagOfWords(t, 384)));
    expect(many.usage.tokens).toBeGreaterThan(0);
  });
});

describe("LangChain OpenAIEmbeddings", () => {
  it("embedQuery and embedDocuments through configuration.fetch", async () => {
    const { fetch, engine } = setup();
    const embeddings = new OpenAIEmbeddings({ model: MODEL, apiKey: "local", batchSize: 6, configuration: { baseURL: BASE, fetch } });
    const query = await embeddings.embedQuery("where is the cat");
    expect(query).toEqual(expected("where is the cat"));
    const docs = Array.from({ length: 10 }, (_, i) => `document ${i}`);
    const vectors = await embeddings.embedDocuments(docs);
    expect(vectors).toEqual(docs.map(expected));
    // LangChain's own batches (6 + 4), then the b4 model's (4 + 2, 4): order kept throughout.
    expect(engine.embeds.slice(1).map((b) => b.input.length)).toEqual([4, 2, 4]);
  });
});
