/**
 * Raw-prompt completions (the legacy Completions API) on the scripted engine:
 * the prompt reaches the engine as is (no chat template), choices per prompt
 * and `n`, echo, stop, max_tokens' legacy default, logprobs in the legacy
 * form, streaming, refusals of what web-llm cannot serve; then the same on
 * `client.fetch` and through the unchanged openai SDK (v6).
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { Client, Completion, CompletionChunk, CompletionCreateParams } from "../../src/index.js";
import { scriptedTokens } from "../../src/testing.js";
import { refusal, scriptedClient } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const MODEL = "Qwen3-0.6B";
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

async function collect(stream: AsyncIterable<CompletionChunk>): Promise<CompletionChunk[]> {
  const chunks: CompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("client.completions.create", () => {
  it("sends the prompt raw (no template, no thinking block) and answers a text_completion", async () => {
    const { client, engine } = scriptedClient([" there was a fox."]);
    const completion = await client.completions.create({ model: MODEL, prompt: "Once upon a time" });
    expect(engine.requests).toHaveLength(1);
    expect(engine.requests[0]).toMatchObject({ rawPrompt: "Once upon a time", messages: [], thinking: { enabled: false }, continueFinalMessage: false });
    expect(engine.requests[0].responseFormat).toBeUndefined();
    expect(completion).toMatchObject({ object: "text_completion", model: MODEL, choices: [{ index: 0, text: " there was a fox.", logprobs: null, finish_reason: "stop" }] });
    expect(completion.id).toMatch(/^cmpl-/);
    // the scripted engine counts the raw prompt's own tokens: no role markers, no generation header
    expect(completion.usage).toMatchObject({ prompt_tokens: scriptedTokens("Once upon a time").length, completion_tokens: scriptedTokens(" there was a fox.").length });
    expect(completion.x_webgpu?.request_id).toMatch(/^req_/);
  });

  it("an array of prompts gets n choices each, indexed prompt * n + i, each generated from its own prompt", async () => {
    const { client, engine } = scriptedClient((request) => ` after ${request.rawPrompt}`);
    const completion = await client.completions.create({ model: MODEL, prompt: ["A", "B"], n: 2 });
    expect(completion.choices.map((c) => [c.index, c.text])).toEqual([
      [0, " after A"],
      [1, " after A"],
      [2, " after B"],
      [3, " after B"],
    ]);
    expect(engine.requests.map((r) => r.rawPrompt)).toEqual(["A", "A", "B", "B"]);
    expect(completion.usage?.completion_tokens).toBe(4 * 2);
  });

  it("usage counts each prompt once however many choices it has (n), and every choice's completion tokens", async () => {
    const { client } = scriptedClient((request) => ` after ${request.rawPrompt}`);
    const one = await client.completions.create({ model: MODEL, prompt: ["A", "B"] });
    const two = await client.completions.create({ model: MODEL, prompt: ["A", "B"], n: 2 });
    expect(two.usage?.prompt_tokens).toBe(one.usage?.prompt_tokens);
    expect(two.usage?.completion_tokens).toBe(2 * (one.usage?.completion_tokens ?? 0));
    expect(two.usage?.total_tokens).toBe((two.usage?.prompt_tokens ?? 0) + (two.usage?.completion_tokens ?? 0));
  });

  it("max_tokens defaults to 16 as in the legacy API; the sampling fields reach the engine", async () => {
    const { client, engine } = scriptedClient([words(30)]);
    const completion = await client.completions.create({
      model: MODEL,
      prompt: "Count:",
      temperature: 0.3,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logit_bias: { "42": -100 },
      seed: 7,
    });
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.usage?.completion_tokens).toBe(16);
    expect(completion.choices[0].text).toBe(words(16));
    expect(engine.requests[0].sampling).toMatchObject({ max_tokens: 16, temperature: 0.3, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: -0.5, logit_bias: { "42": -100 }, seed: 7 });
  });

  it("echo puts the prompt in front of the text; stop cuts before the first stop sequence", async () => {
    const { client } = scriptedClient([" one two. three", " red, green"]);
    const echoed = await client.completions.create({ model: MODEL, prompt: "Say:", echo: true, stop: "." });
    expect(echoed.choices[0]).toMatchObject({ text: "Say: one two", finish_reason: "stop" });
    const plain = await client.completions.create({ model: MODEL, prompt: "Colors:", stop: [",", "\n"], max_tokens: 5 });
    expect(plain.choices[0].text).toBe(" red");
  });

  it("logprobs: tokens, token_logprobs, top_logprobs (that many alternatives) and text_offset counted from the prompt's start", async () => {
    const { client, engine } = scriptedClient([" one two. three"]);
    const prompt = "Say:";
    const completion = await client.completions.create({ model: MODEL, prompt, logprobs: 2, stop: "." });
    const choice = completion.choices[0];
    expect(choice.text).toBe(" one two");
    expect(engine.requests[0].topLogprobs).toBe(2);
    const logprobs = choice.logprobs!;
    // the token that completed the stop sequence is not part of the text, so not of the logprobs
    expect(logprobs.tokens).toEqual([" one", " two"]);
    expect(logprobs.token_logprobs).toHaveLength(2);
    expect(logprobs.token_logprobs.every((l) => l <= 0)).toBe(true);
    expect(logprobs.top_logprobs.map((top) => Object.keys(top))).toEqual([
      [" one", " one~1"],
      [" two", " two~1"],
    ]);
    expect(logprobs.top_logprobs[0][" one"]).toBe(logprobs.token_logprobs[0]);
    expect(logprobs.text_offset).toEqual([prompt.length, prompt.length + " one".length]);
    // each offset points at its token in prompt + text
    logprobs.tokens.forEach((token, i) => expect((prompt + choice.text).slice(logprobs.text_offset[i]).startsWith(token)).toBe(true));
  });

  it("streams text_completion chunks: the text as it comes, a finish chunk per choice, usage last when asked", async () => {
    const { client } = scriptedClient([" a b c", " x y"]);
    const chunks = await collect(await client.completions.create({ model: MODEL, prompt: ["P", "Q"], stream: true, echo: true, stream_options: { include_usage: true } }));
    expect(chunks.every((c) => c.object === "text_completion" && c.model === MODEL)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const textOf = (index: number) => chunks.flatMap((c) => c.choices.filter((x) => x.index === index).map((x) => x.text)).join("");
    expect(textOf(0)).toBe("P a b c");
    expect(textOf(1)).toBe("Q x y");
    // echo: the prompt is its choice's first chunk
    expect(chunks[0].choices[0]).toMatchObject({ index: 0, text: "P", finish_reason: null });
    expect(chunks.flatMap((c) => c.choices.filter((x) => x.finish_reason !== null).map((x) => [x.index, x.finish_reason]))).toEqual([
      [0, "stop"],
      [1, "stop"],
    ]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 3 + 2 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    // without include_usage: no usage key and no usage chunk
    const { client: other } = scriptedClient([" z"]);
    const plain = await collect(await other.completions.create({ model: MODEL, prompt: "P", stream: true }));
    expect(plain.every((c) => !("usage" in c) && c.choices.length === 1)).toBe(true);
  });

  it("streamed logprobs travel with their text; a stop sequence split over tokens never shows", async () => {
    const { client } = scriptedClient([" one END two"]);
    const chunks = await collect(await client.completions.create({ model: MODEL, prompt: "P", stream: true, logprobs: 1, stop: " END" }));
    const choices = chunks.flatMap((c) => c.choices);
    expect(choices.map((c) => c.text).join("")).toBe(" one");
    expect(choices.flatMap((c) => c.logprobs?.tokens ?? [])).toEqual([" one"]);
    expect(choices.flatMap((c) => c.logprobs?.text_offset ?? [])).toEqual([1]);
  });

  it("aborting a stream ends it and frees the queue for the next request", async () => {
    const { client } = scriptedClient([words(200), " next"], { tokenDelayMs: 2 });
    const controller = new AbortController();
    const stream = await client.completions.create({ model: MODEL, prompt: "P", stream: true, max_tokens: 200 }, { signal: controller.signal });
    let seen = 0;
    for await (const chunk of stream) {
      seen += chunk.choices.length;
      if (seen === 3) controller.abort();
    }
    expect(seen).toBeLessThan(50);
    expect((await client.completions.create({ model: MODEL, prompt: "P" })).choices[0].text).toBe(" next");
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
  });

  it("refuses what web-llm cannot serve, naming the field and why", async () => {
    const { client, engine } = scriptedClient([]);
    const create = (body: Record<string, unknown>) => refusal(client.completions.create({ model: MODEL, prompt: "P", ...body } as CompletionCreateParams));
    expect(await create({ suffix: " end" })).toMatchObject({ status: 400, param: "suffix", code: "unsupported_parameter", message: expect.stringMatching(/insertion/) });
    expect(await create({ best_of: 3 })).toMatchObject({ status: 400, param: "best_of", code: "unsupported_parameter", message: expect.stringMatching(/highest log probability/) });
    expect(await create({ prompt: [1, 2, 3] })).toMatchObject({ status: 400, param: "prompt[0]", message: expect.stringMatching(/token ids/) });
    expect(await create({ prompt: [[1, 2]] })).toMatchObject({ status: 400, param: "prompt[0]" });
    expect(await create({ echo: true, logprobs: 1 })).toMatchObject({ status: 400, param: "logprobs", message: expect.stringMatching(/prompt tokens/) });
    expect(await create({ logprobs: 6 })).toMatchObject({ status: 400, param: "logprobs" });
    expect(await create({ prompt: undefined })).toMatchObject({ status: 400, param: "prompt", code: "missing_required_parameter" });
    expect(await create({ prompt: "" })).toMatchObject({ status: 400, param: "prompt" });
    expect(await create({ prompt: ["ok", 5] })).toMatchObject({ status: 400, param: "prompt[1]" });
    expect(await create({ n: 9 })).toMatchObject({ status: 400, param: "n" });
    expect(await create({ max_tokens: 0 })).toMatchObject({ status: 400, param: "max_tokens" });
    expect(await create({ stream_options: { include_usage: true } })).toMatchObject({ status: 400, param: "stream_options" });
    expect(await create({ model: "snowflake-arctic-embed-s" })).toMatchObject({ status: 400, param: "model", code: "model_not_chat" });
    expect(engine.requests).toHaveLength(0);
  });

  it("bounds seed, user and logit_bias as chat does, each refusal naming the field and the bound", async () => {
    const { client, engine } = scriptedClient([" ok", " ok"]);
    const create = (body: Record<string, unknown>) => client.completions.create({ model: MODEL, prompt: "P", ...body } as CompletionCreateParams);
    // 1e300 is an integer, but no safe one: the message names the upper end, not only "at least".
    expect(await refusal(create({ seed: 1e300 }))).toMatchObject({ status: 400, param: "seed", message: expect.stringMatching(/between -9007199254740991 and 9007199254740991, got 1e\+300/) });
    expect(await refusal(create({ user: "u".repeat(257) }))).toMatchObject({ status: 400, param: "user", message: expect.stringMatching(/at most 256 characters/) });
    const bias = (entries: number) => Object.fromEntries(Array.from({ length: entries }, (_, i) => [String(i), -1]));
    expect(await refusal(create({ logit_bias: bias(200_000) }))).toMatchObject({ status: 400, param: "logit_bias", message: expect.stringMatching(/at most 1024 token ids/) });
    expect(engine.requests).toHaveLength(0);
    // At the bounds: accepted.
    await create({ seed: Number.MAX_SAFE_INTEGER, user: "u".repeat(256), logit_bias: bias(1024) });
    expect(engine.requests[0].sampling.seed).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("best_of: 1 is the default behaviour and accepted", async () => {
    const { client } = scriptedClient([" fine"]);
    expect((await client.completions.create({ model: MODEL, prompt: "P", best_of: 1 })).choices[0].text).toBe(" fine");
  });
});

describe("POST /completions on client.fetch", () => {
  it("answers JSON, and SSE data events ending with [DONE] when streamed", async () => {
    const { client } = scriptedClient([" plain", " streamed text", "a chat reply"]);
    const plain = await client.fetch(`${BASE}/completions`, { method: "POST", body: JSON.stringify({ model: MODEL, prompt: "P" }) });
    expect(plain.status).toBe(200);
    const completion = (await plain.json()) as Completion;
    expect(completion).toMatchObject({ object: "text_completion", choices: [{ text: " plain" }] });
    expect(plain.headers.get("x-request-id")).toBe(completion.x_webgpu?.request_id);
    const streamed = await client.fetch(`${BASE}/completions`, { method: "POST", body: JSON.stringify({ model: MODEL, prompt: "P", stream: true }) });
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await streamed.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)) as CompletionChunk);
    expect(chunks.map((c) => c.choices[0].text).join("")).toBe(" streamed text");
    // chat is still chat: "/chat/completions" also ends with "/completions"
    const chat = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }) });
    expect(await chat.json()).toMatchObject({ object: "chat.completion", choices: [{ message: { content: "a chat reply" } }] });
  });

  it("a refusal is the OpenAI error body with its status", async () => {
    const { client } = scriptedClient([]);
    const response = await client.fetch(`${BASE}/completions`, { method: "POST", body: JSON.stringify({ model: MODEL, prompt: "P", suffix: "S" }) });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ type: "invalid_request_error", param: "suffix", code: "unsupported_parameter" });
  });
});

describe("openai v6 on client.fetch: completions.create", () => {
  const sdk = (client: Client) => new OpenAI({ baseURL: BASE, apiKey: "local", fetch: (url: string | URL | Request, init?: RequestInit) => client.fetch(url, init) });

  it("plain: the completion as the SDK types it", async () => {
    const { client } = scriptedClient([" from a base model."]);
    const completion = await sdk(client).completions.create({ model: MODEL, prompt: "Text", max_tokens: 20, logprobs: 1 });
    expect(completion.object).toBe("text_completion");
    expect(completion.choices[0].text).toBe(" from a base model.");
    expect(completion.choices[0].finish_reason).toBe("stop");
    expect(completion.choices[0].logprobs?.tokens).toEqual(scriptedTokens(" from a base model."));
    expect(completion.usage?.completion_tokens).toBe(5);
    expect(completion._request_id).toMatch(/^req_/);
  });

  it("streamed: every chunk, usage last", async () => {
    const { client } = scriptedClient([" one two three"]);
    const stream = await sdk(client).completions.create({ model: MODEL, prompt: "Count:", stream: true, stream_options: { include_usage: true } });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(" one two three");
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBe(3);
  });
});
