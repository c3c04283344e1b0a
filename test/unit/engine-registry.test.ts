import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, ApiError, type Engine, type EngineRequest, type ModelRecord } from "../../src/index.js";
import { registerEngineKind } from "../../src/engine/registry.js";
import type { EngineCapabilities, LoadOptions } from "../../src/engine/types.js";
import { FAMILIES } from "../../src/families/families.js";
import { registerEngineKind as registerFromPackage } from "../../src/index.js";
import { registerEngineKind as registerFromWorkerEntry } from "../../src/worker.js";
import { hostFromConfig } from "../../src/worker/expose.js";

/**
 * A second engine behind the seam, neither web-llm nor scripted: a stand-in for a llama.cpp/wasm
 * engine serving a GGUF file. It fetches its weights itself into a cache of its own (so the URL
 * policy applies and `holdsModel` answers for the cache), needs no GPU, decodes one sequence at a
 * time, verifies no drafts, and constrains output only with JSON.
 */
const GGUF_CAPABILITIES: EngineCapabilities = { gpu: false, prefetch: null, ownsCache: true, batch: false, speculative: false, responseFormats: ["json_object"] };

interface GgufSpec {
  kind: "test-gguf";
  /** What the engine answers, whatever it is asked. */
  answer: string;
}

/** What the engines of this kind were asked, for the assertions. */
const seen = { loads: [] as Array<{ model: string; options: LoadOptions }>, requests: [] as EngineRequest[], held: new Set<string>() };

function createGgufEngine(spec: GgufSpec): Engine {
  let loaded: string | null = null;
  return {
    get loadedModel() {
      return loaded;
    },
    async load(record, options) {
      seen.loads.push({ model: record.model_id, options });
      seen.held.add(record.model_id);
      loaded = record.model_id;
    },
    async *generate(request) {
      seen.requests.push(request);
      for (const piece of spec.answer.split(/(?<= )/)) yield { type: "text", text: piece };
      const completionTokens = spec.answer.split(" ").length;
      yield { type: "done", finish: "stop", usage: { promptTokens: 7, cachedTokens: 0, completionTokens, prefillTokensPerS: 1, decodeTokensPerS: 1 } };
    },
    async unload() {
      loaded = null;
    },
    async holdsModel(record) {
      return seen.held.has(record.model_id);
    },
  };
}

/** A GGUF model's record: a file URL and the engine's own settings, none of MLC's fields (no model_lib, no VRAM figure). */
const ggufRecord = (modelId: string, model = `https://models.invalid/${modelId}.gguf`): ModelRecord => ({
  model,
  model_id: modelId,
  family: "llama-3.1",
  engine: { kind: "test-gguf", answer: "Hello from GGUF." } satisfies GgufSpec,
});

let unregister: Array<() => void> = [];
beforeAll(() => {
  unregister = [
    registerEngineKind({
      kind: "test-gguf",
      capabilities: GGUF_CAPABILITIES,
      scope: "record",
      create: (record) => createGgufEngine(record.engine as unknown as GgufSpec),
    }),
    // The same engine constraining output only with EBNF (a llama.cpp engine's GBNF).
    registerEngineKind({
      kind: "test-ebnf",
      capabilities: { ...GGUF_CAPABILITIES, responseFormats: ["grammar"] },
      scope: "record",
      create: (record) => createGgufEngine(record.engine as unknown as GgufSpec),
    }),
  ];
});
afterAll(() => unregister.forEach((undo) => undo()));

describe("an engine kind registered through the registry (neither web-llm nor scripted)", { timeout: 30_000 }, () => {
  it("serves chat completions, unary and streamed, through createClient and the host", async () => {
    const client = createClient({ worker: false, models: [ggufRecord("tiny-gguf")] });
    const completion = await client.chat.completions.create({ model: "tiny-gguf", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0].message.content).toBe("Hello from GGUF.");
    expect(completion.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });

    const stream = await client.chat.completions.create({ model: "tiny-gguf", messages: [{ role: "user", content: "again" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Hello from GGUF.");
    // No GPU probe stood in the way (Node has no WebGPU), and no MLC download: the engine loaded the record as given.
    expect(seen.loads.filter((l) => l.model === "tiny-gguf")).toHaveLength(1);
  });

  it("gets no web-llm hint at load, and no speculation where it verifies none", async () => {
    // The family asks web-llm for a conv_config; this engine's kind asks for no hints.
    expect(FAMILIES["llama-3.1"].convConfig).toBeDefined();
    const client = createClient({ worker: false, models: [ggufRecord("hint-gguf")] });
    await client.chat.completions.create({ model: "hint-gguf", messages: [{ role: "user", content: "hi" }], prediction: { type: "content", content: "Hello" } });
    const load = seen.loads.find((l) => l.model === "hint-gguf")!;
    expect(load.options).not.toHaveProperty("convConfig");
    expect(seen.requests.at(-1)).toMatchObject({ model: "hint-gguf", speculative: false });
  });

  it("refuses, before generating, a response format the engine does not take; takes one it does", async () => {
    const client = createClient({ worker: false, models: [ggufRecord("format-gguf")] });
    const generated = seen.requests.length;
    const tools = [{ type: "function" as const, function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const error = await client.chat.completions.create({ model: "format-gguf", messages: [{ role: "user", content: "hi" }], tools, tool_choice: "required" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_response_format", param: "response_format" });
    expect(seen.requests.length).toBe(generated);

    await client.chat.completions.create({ model: "format-gguf", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_object" } });
    expect(seen.requests.at(-1)?.responseFormat?.type).toBe("json_object");
  });

  it("gets the same constraints as EBNF where it takes only EBNF, and a 400 where there is none", async () => {
    const record: ModelRecord = { ...ggufRecord("ebnf-gguf"), engine: { kind: "test-ebnf", answer: "{}" } };
    const client = createClient({ worker: false, models: [record] });
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
    const before = seen.requests.length;
    // The stand-in engine answers "{}" whatever the grammar: only what it was given matters here.
    await client.chat.completions.create({ model: "ebnf-gguf", messages: [{ role: "user", content: "hi" }], tools, tool_choice: "required" }).catch(() => undefined);
    expect(seen.requests.length).toBe(before + 1);
    const forced = seen.requests.at(-1)!.responseFormat;
    expect(forced?.type).toBe("grammar");
    expect((forced as { grammar: string }).grammar).toMatch(/^root ::= /);
    expect((forced as { grammar: string }).grammar).toContain("get_weather");

    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    await client.chat.completions.create({ model: "ebnf-gguf", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "a", schema } } });
    expect(seen.requests.at(-1)!.responseFormat).toMatchObject({ type: "grammar" });

    // A schema keyword the EBNF compiler cannot express exactly (web-llm would hand it to xgrammar's own converter).
    const generated = seen.requests.length;
    const loose = { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } };
    const error = await client.chat.completions.create({ model: "ebnf-gguf", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "b", schema: loose } } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_response_format" });
    expect(seen.requests.length).toBe(generated);
  });

  it("names the Responses parameter, text.format, when a Responses request's format has no form the engine takes", async () => {
    const record: ModelRecord = { ...ggufRecord("ebnf-responses-gguf"), engine: { kind: "test-ebnf", answer: "{}" } };
    const client = createClient({ worker: false, models: [record] });
    const generated = seen.requests.length;
    const loose = { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } };
    const error = await client.responses.create({ model: "ebnf-responses-gguf", input: "hi", text: { format: { type: "json_schema", name: "b", schema: loose } } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_response_format", param: "text.format" });
    expect((error as ApiError).message).toContain("leave out text.format");
    expect((error as ApiError).message).not.toContain("response_format");
    expect(seen.requests.length).toBe(generated);
  });

  it("asks the URL policy and its own cache, the gates of an engine that fetches for itself", async () => {
    const client = createClient({ worker: false, models: [ggufRecord("fresh-gguf"), ggufRecord("file-gguf", "file:///etc/model.gguf")] });
    // Its own cache does not hold it yet: downloadable, and no GPU check stands in the way.
    expect(await client.models.status("fresh-gguf")).toMatchObject({ status: "downloadable" });
    await client.chat.completions.create({ model: "fresh-gguf", messages: [{ role: "user", content: "hi" }] });
    expect(await client.models.status("fresh-gguf")).toMatchObject({ status: "available" });

    const refused = await client.chat.completions.create({ model: "file-gguf", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, param: "model" });
    expect(seen.loads.some((l) => l.model === "file-gguf")).toBe(false);
  });

  it("says what to fix when a record names a kind nobody registered", async () => {
    const client = createClient({ worker: false, models: [{ model: "https://models.invalid/x.gguf", model_id: "nobody-gguf", engine: { kind: "llama-cpp" } }] });
    const error = await client.chat.completions.create({ model: "nobody-gguf", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, code: "invalid_model_record" });
    expect((error as ApiError).message).toMatch(/llama-cpp.*not registered/);
  });
});

/**
 * An app's own engine for the records that name no kind, by the name of a kind
 * it registered: `createClient({ engine: "<kind>" })` in the page, or
 * `{ kind: "<kind>" }` as the worker's EngineSpec (a worker cannot be sent an
 * Engine object; the app's worker module registers the kind and the page names it).
 */
describe("a registered kind named as the engine of records that name none", { timeout: 30_000 }, () => {
  /** An MLC-style record: no `engine` field, so web-llm's unless the host is told otherwise. */
  const plainRecord: ModelRecord = { model: "https://models.invalid/plain", model_id: "plain-model", family: "llama-3.1" };
  let undo: () => void = () => undefined;
  beforeAll(() => {
    undo = registerFromPackage({ kind: "test-default", capabilities: GGUF_CAPABILITIES, scope: "host", create: () => createGgufEngine({ kind: "test-gguf", answer: "Hello from the app's kind." }) });
  });
  afterAll(() => undo());
  const ask = { model: "plain-model", messages: [{ role: "user" as const, content: "hi" }] };

  it("is exported by both entries that run a host (the package's and webgpu-openai/worker)", () => {
    expect(registerFromPackage).toBe(registerFromWorkerEntry);
  });

  it("serves them in this page (worker: false)", async () => {
    const client = createClient({ worker: false, engine: "test-default", models: [plainRecord] });
    const completion = await client.chat.completions.create(ask);
    expect(completion.choices[0].message.content).toBe("Hello from the app's kind.");
  });

  it("serves them in a worker whose EngineSpec names the kind", async () => {
    const host = hostFromConfig({ engine: { kind: "test-default" }, models: [plainRecord] });
    const completion = await host.createChatCompletion(ask);
    expect(completion.choices[0].message.content).toBe("Hello from the app's kind.");
  });

  it("says where to register a kind nobody registered (400 naming it)", async () => {
    const client = createClient({ worker: false, engine: "nobody-registered", models: [plainRecord] });
    const error = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: "unknown_engine_kind", param: "engine" });
    expect((error as ApiError).message).toMatch(/"nobody-registered".*registerEngineKind/);
  });
});
