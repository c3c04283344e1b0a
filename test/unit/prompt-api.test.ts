/**
 * The Prompt API (`webgpu-openai/prompt-api`) on a client with the scripted
 * engine: what an app written for Chrome's `LanguageModel` relies on —
 * sessions as conversations, streaming, append, clone without re-prefill,
 * context usage and overflow, tools run by the session, response
 * constraints, prefixes, aborts and destroy, and the DOMException names the
 * explainer gives.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ChatCompletion, type Client } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngine, type ScriptedEngineOptions } from "../../src/testing.js";
import { createPromptApi, installPromptApi, type LanguageModelClass, type LanguageModelSession } from "../../src/prompt-api/index.js";
import { chooseModel } from "../../src/prompt-api/model-choice.js";
import type { EngineRequest } from "../../src/engine/types.js";
import type { ModelObject } from "../../src/protocol/types.js";
import { scriptedVoiceModel } from "../../src/testing.js";
import { makeWav } from "./support/wav.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const VISION = "Phi-3.5-vision-instruct-q4f16_1-MLC";
/** A custom record with a small context window, for overflow. */
const VOICE = scriptedVoiceModel({ id: "Demo-Voice-MLC", replies: ["I heard a tone.", "Another tone."] });
const TINY = { model: "http://127.0.0.1:9/tiny/", model_id: "Qwen2.5-Tiny-q4f32_1-MLC", model_lib: "http://127.0.0.1:9/tiny.wasm", overrides: { context_window_size: 120 } };

interface Setup {
  LanguageModel: LanguageModelClass;
  engine: ScriptedEngine;
  client: Client;
  /** Every chat completion the sessions received from the client (non-streamed), in order. */
  completions: ChatCompletion[];
  /** Every chat request body the sessions sent. */
  bodies: Array<Record<string, unknown>>;
}

function setup(replies: ScriptedEngineOptions["replies"], options: { model?: string; tokenDelayMs?: number } = {}): Setup {
  const engine = createScriptedEngine({ replies, tokenDelayMs: options.tokenDelayMs, loadDelayMs: 4 });
  const client = createClient({ worker: false, engine, models: [TINY, VOICE] });
  const completions: ChatCompletion[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  // The same client, observed: what the sessions send and what the pipeline reports back.
  const observed: Client = {
    ...client,
    chat: {
      completions: {
        create: (async (body: Record<string, unknown>, requestOptions?: { signal?: AbortSignal | null }) => {
          bodies.push(structuredClone(body));
          const result = await client.chat.completions.create(body as never, requestOptions);
          if (!body.stream) completions.push(result as unknown as ChatCompletion);
          return result;
        }) as unknown as Client["chat"]["completions"]["create"],
      },
    },
  };
  const LanguageModel = createPromptApi({ client: observed, model: options.model ?? MODEL });
  return { LanguageModel, engine, client, completions, bodies };
}

const texts = (request: EngineRequest) => request.messages.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("")}`);
const lastRequest = (engine: ScriptedEngine) => engine.requests[engine.requests.length - 1];

async function rejection(promise: Promise<unknown>): Promise<DOMException> {
  try {
    await promise;
  } catch (error) {
    return error as DOMException;
  }
  throw new Error("expected a rejection");
}

async function readAll(stream: ReadableStream<string>): Promise<string[]> {
  const parts: string[] = [];
  for await (const part of stream as unknown as AsyncIterable<string>) parts.push(part);
  return parts;
}

describe("sessions are conversations", () => {
  it("prompt() answers, and the next prompt carries the previous turn", async () => {
    const { LanguageModel, engine } = setup(["I like sunflower seeds.", "Rain means indoor games."]);
    const session = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "Pretend to be an eloquent hamster." }] });
    expect(await session.prompt("What is your favorite food?")).toBe("I like sunflower seeds.");
    expect(await session.prompt("And on a rainy day?")).toBe("Rain means indoor games.");
    expect(texts(lastRequest(engine))).toEqual([
      "system: Pretend to be an eloquent hamster.",
      "user: What is your favorite food?",
      "assistant: I like sunflower seeds.",
      "user: And on a rainy day?",
    ]);
  });

  it("promptStreaming() is a ReadableStream of text deltas that join to the reply", async () => {
    const { LanguageModel } = setup(["One two three four."]);
    const session = await LanguageModel.create();
    const stream = session.promptStreaming("Count.");
    expect(stream).toBeInstanceOf(ReadableStream);
    const parts = await readAll(stream);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe("One two three four.");
  });

  it("operations run in call order: a prompt called before the first settles sees its turn", async () => {
    const { LanguageModel, engine } = setup(["First.", "Second."], { tokenDelayMs: 2 });
    const session = await LanguageModel.create();
    const [a, b] = await Promise.all([session.prompt("One"), session.prompt("Two")]);
    expect([a, b]).toEqual(["First.", "Second."]);
    expect(texts(lastRequest(engine))).toEqual(["user: One", "assistant: First.", "user: Two"]);
  });

  it("append() adds messages without generating; the next prompt sends them", async () => {
    const { LanguageModel, engine } = setup(["Both are cats."]);
    const session = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "You compare notes." }] });
    await session.append([{ role: "user", content: "Note one: a cat." }]);
    await session.append("Note two: another cat.");
    expect(engine.requests).toHaveLength(0);
    expect(await session.prompt("What do they share?")).toBe("Both are cats.");
    expect(texts(lastRequest(engine))).toEqual(["system: You compare notes.", "user: Note one: a cat.", "user: Note two: another cat.", "user: What do they share?"]);
  });

  it("a system message is only allowed first in the first sequence (TypeError elsewhere)", async () => {
    const { LanguageModel } = setup(["ok", "ok"]);
    await expect(LanguageModel.create({ initialPrompts: [{ role: "user", content: "hi" }, { role: "system", content: "late" }] })).rejects.toThrow(TypeError);
    const fresh = await LanguageModel.create();
    await fresh.append([{ role: "system", content: "Be brief." }]); // first sequence: allowed
    await expect(fresh.append([{ role: "system", content: "Again" }])).rejects.toThrow(TypeError);
    const withSystem = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "Be brief." }] });
    await expect(withSystem.prompt([{ role: "system", content: "x" }, { role: "user", content: "y" }])).rejects.toThrow(TypeError);
  });
});

describe("clone() shares the prefix the prompt cache holds", () => {
  const examples = Array.from({ length: 40 }, (_, i) => [
    { role: "user" as const, content: `Comment number ${i}: this change looks good to me and the tests are green.` },
    { role: "assistant" as const, content: `👍, 🚢, ${i}` },
  ]).flat();
  const initialPrompts = [{ role: "system" as const, content: "Predict up to 5 emojis as a response to a comment. Output emojis, comma-separated." }, ...examples];

  it("a clone's first prompt does not prefill the 1 000-token initial prompts again", async () => {
    const { LanguageModel, completions, client } = setup(["🎨, 🔁", "🏆, 🚀"]);
    const session = await LanguageModel.create({ initialPrompts });
    expect(session.contextUsage).toBeGreaterThan(1000);
    const counted = await client.tokens.count({ model: MODEL, messages: initialPrompts });
    expect(session.contextUsage).toBe(counted.input_tokens);

    const first = await session.clone();
    expect(await first.prompt("Back to the drawing board")).toBe("🎨, 🔁");
    const second = await session.clone();
    expect(await second.prompt("This code is so good you should get promoted")).toBe("🏆, 🚀");

    const [a, b] = completions;
    // The first clone prefilled everything (nothing was cached yet)…
    expect(a.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(a.x_webgpu.prefill_tokens).toBe(a.usage.prompt_tokens);
    // …the second only its own comment: the shared prefix came from the prompt cache.
    expect(b.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(session.contextUsage - 2);
    expect(b.x_webgpu.prefill_tokens).toBeLessThan(20);
    // The session reports the same figures itself (lastReport, an extension).
    expect(second.lastReport?.stats?.prefill_tokens).toBe(b.x_webgpu.prefill_tokens);
    expect(second.lastReport?.usage?.prompt_tokens_details.cached_tokens).toBe(b.usage.prompt_tokens_details.cached_tokens);
  });

  it("a clone continues the parent's history without prefilling it, and the two then diverge", async () => {
    const { LanguageModel, completions, engine } = setup(["🙂", "🍕", "🌧️"]);
    const session = await LanguageModel.create({ initialPrompts });
    await session.prompt("Lunch was great");
    const clone = await session.clone();
    await clone.prompt("Pizza again");
    expect(completions[1].x_webgpu.prefill_tokens).toBeLessThan(20);
    expect(clone.contextUsage).toBeGreaterThan(session.contextUsage);
    await session.prompt("It is raining");
    expect(texts(lastRequest(engine)).slice(-3)).toEqual(["user: Lunch was great", "assistant: 🙂", "user: It is raining"]);
  });
});

describe("context usage and overflow", () => {
  it("contextUsage is the model's token count of the history; measureContextUsage counts an input alone", async () => {
    const { LanguageModel, client } = setup(["Short answer."]);
    const session = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "Be helpful." }] });
    const system = { role: "system" as const, content: "Be helpful." };
    expect(session.contextUsage).toBe((await client.tokens.count({ model: MODEL, messages: [system] })).input_tokens);
    const measured = await session.measureContextUsage("How long is this question?");
    expect(measured).toBe((await client.tokens.count({ model: MODEL, messages: [{ role: "user", content: "How long is this question?" }] })).input_tokens);
    expect(await session.measureInputUsage("How long is this question?")).toBe(measured);
    await session.prompt("How long is this question?");
    const history = [system, { role: "user" as const, content: "How long is this question?" }, { role: "assistant" as const, content: "Short answer." }];
    expect(session.contextUsage).toBe((await client.tokens.count({ model: MODEL, messages: history })).input_tokens);
    expect(session.inputUsage).toBe(session.contextUsage);
    expect(session.contextWindow).toBe(4096);
    expect(session.inputQuota).toBe(4096);
  });

  it("a committed turn whose recount fails still resolves; the request's own token figures stand in", async () => {
    const { client, completions } = setup(["Counted anyway."]);
    let failCounts = false;
    const flaky: Client = { ...client, tokens: { count: (body, o) => (failCounts ? Promise.reject(new Error("worker gone")) : client.tokens.count(body, o)) } };
    const observed = createPromptApi({ client: { ...flaky, chat: { completions: { create: (async (b: never, o: never) => { const r = await client.chat.completions.create(b, o); completions.push(r as never); failCounts = true; return r; }) as never } } }, model: MODEL });
    const session = await observed.create();
    expect(await session.prompt("Count this.")).toBe("Counted anyway.");
    expect(session.contextUsage).toBe(completions[0].usage.prompt_tokens + completions[0].usage.completion_tokens);
  });

  it("a prompt past the window evicts the oldest turns (never the initial prompts) and fires contextoverflow", async () => {
    const { LanguageModel, engine } = setup((r) => `Noted ${r.messages.length}.`, { model: TINY.model_id });
    const session = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "Keep notes." }] });
    const events: string[] = [];
    session.addEventListener("contextoverflow", () => events.push("contextoverflow"));
    session.onquotaoverflow = () => events.push("handler");
    const note = (i: number) => `Note ${i}: ${"word ".repeat(20)}`;
    for (let i = 0; i < 3; i++) await session.prompt(note(i));
    expect(events).toEqual([]);
    await session.prompt(note(3));
    expect(events).toEqual(["contextoverflow", "handler"]);
    const sent = texts(lastRequest(engine));
    expect(sent[0]).toBe("system: Keep notes.");
    expect(sent.some((t) => t.startsWith("user: Note 0"))).toBe(false);
    expect(sent.at(-1)).toMatch(/^user: Note 3/);
    expect(session.contextUsage).toBeLessThan(session.contextWindow);
  });

  it("an input that cannot fit even alone is a QuotaExceededError with requested and quota, and nothing is evicted", async () => {
    const { LanguageModel, engine } = setup(["Fine."], { model: TINY.model_id });
    const session = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "Keep notes." }] });
    await session.prompt("A short note.");
    const usage = session.contextUsage;
    const error = (await rejection(session.prompt("word ".repeat(200)))) as DOMException & { requested: number; quota: number };
    expect(error).toBeInstanceOf(DOMException);
    expect(error.name).toBe("QuotaExceededError");
    expect(error.requested).toBeGreaterThan(200);
    expect(error.quota).toBe(session.contextWindow - usage);
    expect(session.contextUsage).toBe(usage);
    expect(engine.requests).toHaveLength(1);
  });

  it("initial prompts too long for the window reject create() with QuotaExceededError", async () => {
    const { LanguageModel } = setup([], { model: TINY.model_id });
    const error = await rejection(LanguageModel.create({ initialPrompts: [{ role: "system", content: "word ".repeat(200) }] }));
    expect(error.name).toBe("QuotaExceededError");
  });
});

describe("tools with execute", () => {
  const call = (city: string) => `<tool_call>\n{"name": "getWeather", "arguments": {"location": "${city}"}}\n</tool_call>`;

  it("runs several calls of one reply at once and feeds the results back until the model answers", async () => {
    const { LanguageModel, engine } = setup([`${call("Seattle")}\n${call("Tokyo")}`, "Tokyo is warmest."]);
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const session = await LanguageModel.create({
      tools: [
        {
          name: "getWeather",
          description: "Get the weather in a location.",
          inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
          async execute({ location }: { location: string }) {
            started.push(location);
            if (started.length === 2) release();
            await gate; // resolves only once both calls are running
            return JSON.stringify({ location, celsius: location === "Tokyo" ? 24 : 12 });
          },
        },
      ],
    });
    expect(await session.prompt("Which is warmer, Seattle or Tokyo?")).toBe("Tokyo is warmest.");
    expect(started).toEqual(["Seattle", "Tokyo"]);
    const second = lastRequest(engine);
    const sent = texts(second).join("\n");
    expect(sent).toContain('"celsius":12');
    expect(sent).toContain('"celsius":24');
    // The declared tool reached the model's prompt (the family renders it into the system text).
    expect(texts(engine.requests[0])[0]).toContain("getWeather");
    // The exchange stays in the history: the next prompt carries it.
    await expect(session.prompt("Thanks")).rejects.toThrow(); // the script is exhausted: the request itself went out
    expect(texts(lastRequest(engine)).join("\n")).toContain("Tokyo is warmest.");
  });

  it("promptStreaming runs the tools too: the streamed call is executed and the answer streams", async () => {
    const { LanguageModel, engine } = setup([call("Berlin"), "Berlin is mild today."]);
    const seen: string[] = [];
    const session = await LanguageModel.create({
      tools: [{ name: "getWeather", description: "Weather.", inputSchema: { type: "object" }, execute: async ({ location }: { location: string }) => (seen.push(location), `{"celsius": 15}`) }],
    });
    const parts = await readAll(session.promptStreaming("Weather in Berlin?"));
    expect(seen).toEqual(["Berlin"]);
    expect(parts.join("")).toBe("Berlin is mild today.");
    expect(texts(lastRequest(engine)).join("\n")).toContain('{"celsius": 15}');
  });

  it("a tool without execute is a TypeError at create()", async () => {
    const { LanguageModel } = setup([]);
    await expect(LanguageModel.create({ tools: [{ name: "x", description: "", inputSchema: {} } as never] })).rejects.toThrow(TypeError);
  });
});

describe("responseConstraint", () => {
  const schema = { type: "object", required: ["rating"], additionalProperties: false, properties: { rating: { type: "number", minimum: 0, maximum: 5 } } };

  it("a JSON schema becomes the request's json_schema response_format, and is told to the model unless omitted", async () => {
    const { LanguageModel, engine, bodies } = setup(['{"rating": 5}', '{"rating": 4}']);
    const session = await LanguageModel.create();
    const result = await session.prompt("Summarize this feedback into a rating between 0-5: delicious.", { responseConstraint: schema });
    expect(JSON.parse(result)).toEqual({ rating: 5 });
    expect(bodies[0].response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema, strict: true } });
    expect(engine.requests[0].responseFormat).toEqual({ type: "json_object", schema: JSON.stringify(schema) });
    expect(texts(engine.requests[0]).at(-1)).toContain(JSON.stringify(schema));

    const before = await session.measureContextUsage("Rate it.", { responseConstraint: schema });
    const omitted = await session.measureContextUsage("Rate it.", { responseConstraint: schema, omitResponseConstraintInput: true });
    expect(before).toBeGreaterThan(omitted);
    await session.prompt("Rate it: a JSON object { rating }.", { responseConstraint: schema, omitResponseConstraintInput: true });
    expect(texts(lastRequest(engine)).at(-1)).toBe("user: Rate it: a JSON object { rating }.");
  });

  it("omitResponseConstraintInput without a constraint is a TypeError; a reply that is not JSON is a SyntaxError", async () => {
    const { LanguageModel } = setup(["not json at all"]);
    const session = await LanguageModel.create();
    await expect(session.prompt("x", { omitResponseConstraintInput: true })).rejects.toThrow(TypeError);
    expect((await rejection(session.prompt("Rate.", { responseConstraint: schema }))).name).toBe("SyntaxError");
    expect(session.contextUsage).toBe(0); // the failed turn left nothing
  });

  it("a RegExp is sent as the grammar extension; flags that change matching are refused", async () => {
    const { LanguageModel, bodies } = setup(["ana@example.com", "ana@example.com"]);
    const session = await LanguageModel.create();
    const email = /[a-z]+@[a-z]+\.com/;
    const outcome = await session.prompt("Create a fictional email address.", { responseConstraint: email }).then(
      (value) => ({ value }),
      (error: DOMException) => ({ error }),
    );
    expect(bodies[0].response_format).toEqual({ type: "grammar", syntax: "regex", definition: email.source });
    expect(outcome).toEqual({ value: "ana@example.com" });
    // A construct the regex compiler cannot express exactly is NotSupportedError naming it, never a looser grammar.
    const lookbehind = await rejection(session.prompt("x", { responseConstraint: /(?<=a)b/ }));
    expect(lookbehind.name).toBe("NotSupportedError");
    expect(lookbehind.message).toMatch(/lookbehind|look-?behind/i);
    expect((await rejection(session.prompt("x", { responseConstraint: /abc/i }))).name).toBe("NotSupportedError");
  });

  it("a reply the context window cut is a SyntaxError that says so, found without re-matching the RegExp (which backtracks exponentially here)", async () => {
    // 200 words and no final ".": a backtracking `^(?:(\w+\s?)+\.)$` never finishes on it (4 s at 9 words, 5× per word more).
    const rambling = "word ".repeat(200);
    const { LanguageModel } = setup([{ text: rambling, finish: "length" }, { text: rambling, finish: "length" }, { text: '{"rating": ', finish: "length" }]);
    const session = await LanguageModel.create();
    const started = performance.now();
    const cut = await rejection(session.prompt("Ramble, then end with a period.", { responseConstraint: /(\w+\s?)+\./ }));
    expect(cut.name).toBe("SyntaxError");
    expect(cut.message).toMatch(/cut by the context window/);
    // The streamed form errors the stream the same way.
    const streamed = await rejection(readAll(session.promptStreaming("Again.", { responseConstraint: /(\w+\s?)+\./ })));
    expect(streamed.name).toBe("SyntaxError");
    expect(streamed.message).toMatch(/cut by the context window/);
    expect(performance.now() - started).toBeLessThan(5_000);
    // A JSON reply cut mid-object says it was cut too, not merely "not JSON".
    expect((await rejection(session.prompt("Rate.", { responseConstraint: schema }))).message).toMatch(/cut by the context window/);
    expect(session.contextUsage).toBe(0); // the cut turns left nothing
  });
});

describe("prefix, media, expectations", () => {
  it("a final assistant message with prefix: true is continued, and the history keeps it whole", async () => {
    const { LanguageModel, engine } = setup(['name = "Grum"\n```', "Done."]);
    const session = await LanguageModel.create();
    const sheet = await session.prompt([
      { role: "user", content: "Create a TOML character sheet for a gnome barbarian" },
      { role: "assistant", content: "```toml\n", prefix: true },
    ]);
    expect(sheet).toBe('name = "Grum"\n```');
    expect(engine.requests[0].continueFinalMessage).toBe(true);
    await session.prompt("Thanks");
    expect(texts(lastRequest(engine))).toEqual(["user: Create a TOML character sheet for a gnome barbarian", 'assistant: ```toml\nname = "Grum"\n```', "user: Thanks"]);
  });

  it("prefix anywhere but a final assistant message of prompt() is a SyntaxError", async () => {
    const { LanguageModel } = setup([]);
    const session = await LanguageModel.create();
    const misplaced = [{ role: "assistant" as const, content: "a", prefix: true }, { role: "user" as const, content: "b" }];
    expect((await rejection(session.prompt(misplaced))).name).toBe("SyntaxError");
    expect((await rejection(session.append([{ role: "assistant", content: "a", prefix: true }]))).name).toBe("SyntaxError");
  });

  it("images reach a vision model as image parts; a text model refuses expectedInputs image with NotSupportedError", async () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const vision = setup(["A red square."], { model: VISION });
    const session = await vision.LanguageModel.create({ expectedInputs: [{ type: "image" }] });
    expect(await session.prompt([{ role: "user", content: [{ type: "text", value: "Describe:" }, { type: "image", value: png }] }])).toBe("A red square.");
    const parts = vision.engine.requests[0].messages.at(-1)!.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(parts.find((p) => p.type === "image_url")?.image_url?.url).toMatch(/^data:image\/png;base64,/);

    const text = setup([]);
    expect((await rejection(text.LanguageModel.create({ expectedInputs: [{ type: "image" }] }))).name).toBe("NotSupportedError");
    expect(await text.LanguageModel.availability({ expectedInputs: [{ type: "image" }] })).toBe("unavailable");
    expect((await rejection(text.LanguageModel.create({ expectedOutputs: [{ type: "audio" as never }] }))).name).toBe("NotSupportedError");
    // Media the session was not created to expect, and media in an assistant message.
    const plain = await text.LanguageModel.create();
    expect((await rejection(plain.prompt([{ role: "user", content: [{ type: "image", value: png }] }]))).name).toBe("NotSupportedError");
    expect((await rejection(session.prompt([{ role: "assistant", content: [{ type: "image", value: png }] }]))).name).toBe("NotSupportedError");
    // A value of the wrong kind is a TypeError; bytes in no image format an EncodingError.
    await expect(session.prompt([{ role: "user", content: [{ type: "image", value: "not an image" }] }])).rejects.toThrow(TypeError);
    expect((await rejection(session.prompt([{ role: "user", content: [{ type: "image", value: new Uint8Array([1, 2, 3]) }] }]))).name).toBe("EncodingError");
  });

  it("audio reaches a model that takes it: WAV bytes as input_audio, an AudioBuffer as mono pcm_f32", async () => {
    const { LanguageModel, bodies } = setup([], { model: VOICE.model_id });
    const session = await LanguageModel.create({ expectedInputs: [{ type: "audio" }] });
    expect(await session.prompt([{ role: "user", content: [{ type: "text", value: "What is this?" }, { type: "audio", value: new Blob([makeWav({ seconds: 0.5 }) as BlobPart]) }] }])).toBe("I heard a tone.");
    const first = bodies[0].messages as Array<{ content: Array<{ type: string; input_audio?: { format: string } }> }>;
    expect(first.at(-1)!.content.find((p) => p.type === "input_audio")?.input_audio?.format).toBe("wav");
    const left = new Float32Array(8000).fill(0.5);
    const right = new Float32Array(8000).fill(-0.25);
    const buffer = { sampleRate: 16_000, numberOfChannels: 2, length: 8000, getChannelData: (c: number) => (c === 0 ? left : right) };
    expect(await session.prompt([{ role: "user", content: [{ type: "audio", value: buffer }] }])).toBe("Another tone.");
    const second = bodies[1].messages as Array<{ content: Array<{ type: string; input_audio?: { format: string; sample_rate: number; data: Float32Array } }> }>;
    const pcm = second.at(-1)!.content.find((p) => p.type === "input_audio")!.input_audio!;
    expect(pcm.format).toBe("pcm_f32");
    expect(pcm.sample_rate).toBe(16_000);
    expect(pcm.data[0]).toBeCloseTo(0.125);
  });

  it("audio bytes in no container the pipeline decodes are an EncodingError before any request (AAC ADTS is not MP3)", async () => {
    const { LanguageModel, bodies } = setup([], { model: VOICE.model_id });
    const session = await LanguageModel.create({ expectedInputs: [{ type: "audio" }] });
    for (const value of [new Uint8Array([0xff, 0xf1, 0x50, 0x80]), new Uint8Array([1, 2, 3])]) {
      expect((await rejection(session.prompt([{ role: "user", content: [{ type: "audio", value }] }]))).name).toBe("EncodingError");
    }
    expect(bodies).toHaveLength(0);
  });

  it("a bad language tag is a RangeError; languages themselves are accepted", async () => {
    const { LanguageModel } = setup([]);
    await expect(LanguageModel.create({ expectedInputs: [{ type: "text", languages: ["not a tag!"] }] })).rejects.toThrow(RangeError);
    await expect(LanguageModel.create({ expectedInputs: [{ type: "text", languages: ["en", "ja"] }], expectedOutputs: [{ type: "text", languages: ["ja"] }] })).resolves.toBeTruthy();
  });
});

describe("aborts and destroy", () => {
  it("an aborted prompt rejects with the signal's reason and leaves no trace in the history", async () => {
    const { LanguageModel, engine } = setup(["A long long long long long long long long long reply.", "Short."], { tokenDelayMs: 5 });
    const session = await LanguageModel.create();
    const controller = new AbortController();
    const pending = session.prompt("Write me a poem", { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    expect((await rejection(pending)).name).toBe("AbortError");
    expect(session.contextUsage).toBe(0);
    await session.prompt("Just say hi");
    expect(texts(lastRequest(engine))).toEqual(["user: Just say hi"]);
  });

  it("a prompt aborted while queued leaves the queue at once", async () => {
    const { LanguageModel } = setup(["Slow slow slow slow slow slow slow slow.", "Next."], { tokenDelayMs: 10 });
    const session = await LanguageModel.create();
    const first = session.prompt("One");
    const controller = new AbortController();
    const queued = session.prompt("Two", { signal: controller.signal });
    let settled = false;
    void queued.catch(() => (settled = true));
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settled).toBe(true);
    expect(await first).toBe("Slow slow slow slow slow slow slow slow.");
  });

  it("a tool that never returns: the aborted prompt rejects with the signal's reason, and later prompt, append and clone still run", async () => {
    const call = `<tool_call>\n{"name": "lookUp", "arguments": {}}\n</tool_call>`;
    const { LanguageModel, engine } = setup([call, "After.", "Cloned."]);
    let calls = 0;
    const session = await LanguageModel.create({
      tools: [{ name: "lookUp", description: "Never answers.", inputSchema: { type: "object" }, execute: () => (calls++, new Promise<string>(() => {})) }],
    });
    const stuck = await rejection(session.prompt("Look it up.", { signal: AbortSignal.timeout(30) }));
    expect(calls).toBe(1);
    expect(stuck.name).toBe("TimeoutError");
    await session.append("One more thing.");
    expect(await session.prompt("Then?")).toBe("After.");
    // The aborted turn left nothing: the history holds the append and the new prompt only.
    expect(texts(lastRequest(engine)).filter((text) => text.startsWith("user: "))).toEqual(["user: One more thing.", "user: Then?"]);
    const clone = await session.clone();
    expect(await clone.prompt("And?")).toBe("Cloned.");
  });

  it("cancelling a promptStreaming reader stops it and keeps nothing", async () => {
    const { LanguageModel, engine } = setup(["Many many many many many many many many many words.", "Ok."], { tokenDelayMs: 5 });
    const session = await LanguageModel.create();
    const reader = session.promptStreaming("Talk").getReader();
    await reader.read();
    await reader.cancel();
    await session.prompt("Again");
    expect(texts(lastRequest(engine))).toEqual(["user: Again"]);
  });

  it("destroy() rejects the running prompt with AbortError and later calls with InvalidStateError", async () => {
    const { LanguageModel } = setup(["Slow slow slow slow slow slow slow slow."], { tokenDelayMs: 10 });
    const session = await LanguageModel.create();
    const running = session.prompt("One");
    await new Promise((resolve) => setTimeout(resolve, 15));
    session.destroy();
    expect((await rejection(running)).name).toBe("AbortError");
    expect((await rejection(session.prompt("Two"))).name).toBe("InvalidStateError");
    expect((await rejection(session.clone())).name).toBe("InvalidStateError");
  });

  it("create()'s signal: aborted before, it rejects; aborted after, it destroys the session", async () => {
    const { LanguageModel } = setup(["x"]);
    expect((await rejection(LanguageModel.create({ signal: AbortSignal.abort() }))).name).toBe("AbortError");
    const controller = new AbortController();
    const session = await LanguageModel.create({ signal: controller.signal });
    controller.abort();
    expect((await rejection(session.prompt("hi"))).name).toBe("InvalidStateError");
  });
});

describe("the LanguageModel statics", () => {
  it("create() reports load progress to the monitor as downloadprogress events from 0 to 1", async () => {
    const { LanguageModel } = setup([]);
    const loaded: number[] = [];
    await LanguageModel.create({ monitor: (m) => m.addEventListener("downloadprogress", (e) => loaded.push((e as ProgressEvent).loaded)) });
    expect(loaded[0]).toBe(0);
    expect(loaded.at(-1)).toBe(1);
    expect(loaded.length).toBeGreaterThan(2);
    expect([...loaded].sort((a, b) => a - b)).toEqual(loaded);
  });

  it("availability() of a model that needs no download is available; params() gives the sampling bounds", async () => {
    const { LanguageModel } = setup([]);
    expect(await LanguageModel.availability()).toBe("available");
    expect(await LanguageModel.params()).toEqual({ defaultTopK: 3, maxTopK: 128, defaultTemperature: 1, maxTemperature: 2 });
  });

  it("samplingMode picks the request's sampling; it excludes temperature/topK (TypeError)", async () => {
    const { LanguageModel, engine } = setup(["a"]);
    const session = await LanguageModel.create({ samplingMode: "most-predictable" });
    expect(session.samplingMode).toBe("most-predictable");
    await session.prompt("x");
    expect(engine.requests[0].sampling.temperature).toBe(0);
    await expect(LanguageModel.create({ samplingMode: "creative", temperature: 1 } as never)).rejects.toThrow(TypeError);
  });

  it("sessions cannot be constructed directly", () => {
    const { LanguageModel } = setup([]);
    expect(() => new (LanguageModel as unknown as new () => LanguageModelSession)()).toThrow(TypeError);
  });

  it("installPromptApi defines globalThis.LanguageModel only where none exists, unless told to replace it", () => {
    const scope = globalThis as { LanguageModel?: unknown };
    expect(scope.LanguageModel).toBeUndefined();
    const engine = createScriptedEngine({ replies: [] });
    const client = createClient({ worker: false, engine });
    const first = installPromptApi({ client, model: MODEL });
    expect(first.installed).toBe(true);
    expect(scope.LanguageModel).toBe(first.LanguageModel);
    const second = installPromptApi({ client, model: MODEL });
    expect(second.installed).toBe(false);
    expect(scope.LanguageModel).toBe(first.LanguageModel);
    const third = installPromptApi({ client, model: MODEL, replace: true });
    expect(scope.LanguageModel).toBe(third.LanguageModel);
    third.uninstall();
    expect(scope.LanguageModel).toBe(first.LanguageModel);
    first.uninstall();
    expect(scope.LanguageModel).toBeUndefined();
  });
});

describe("the default model", () => {
  const model = (id: string, vram: number, extra: Partial<ModelObject> = {}): ModelObject => ({
    id,
    object: "model",
    created: 0,
    owned_by: "webgpu-openai",
    type: "chat",
    family: "qwen3",
    vram_required_mb: vram,
    context_window: 4096,
    input_modalities: ["text"],
    capabilities: { tools: true, reasoning: false, vision: false, audio: false, embeddings: false },
    quantization: id.includes("q4f16") ? "q4f16_1" : "q4f32_1",
    ...extra,
  });
  const gpu = (features: string[]) => ({ available: true as const, info: { vendor: "", architecture: "", device: "", description: "", features, limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } });
  const catalog = [model("Small-q4f16_1-MLC", 900), model("Mid-q4f16_1-MLC", 2500), model("Big-q4f16_1-MLC", 5000), model("Huge-q4f16_1-MLC", 9000), model("Mid-q4f32_1-MLC", 3000), model("Eyes-q4f16_1-MLC", 4000, { input_modalities: ["text", "image"] })];

  it("is the largest chat model in this adapter's quantization within the memory budget", () => {
    expect(chooseModel(catalog, gpu(["shader-f16"]), new Set(), undefined)).toBe("Big-q4f16_1-MLC");
    expect(chooseModel(catalog, gpu([]), new Set(), undefined)).toBe("Mid-q4f32_1-MLC");
    expect(chooseModel(catalog, gpu(["shader-f16"]), new Set(), 4)).toBe("Small-q4f16_1-MLC");
    expect(chooseModel(catalog, gpu(["shader-f16"]), new Set(["image"]), undefined)).toBe("Eyes-q4f16_1-MLC");
    expect(chooseModel(catalog, { available: false, reason: "no WebGPU" }, new Set(), undefined)).toBeNull();
  });
});
