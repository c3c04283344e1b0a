/**
 * Tool-call arguments stream as they are generated (issue 20, item 8), as the
 * hosted API streams them and as UIs that show a call being written rely on
 * (the AI SDK's tool-input deltas): a Qwen3 call to `write_file` with a
 * 200-word `content` arrives in many `tool_calls` deltas, the first long
 * before the call closes; the same through the openai SDK on `client.fetch`,
 * and as `response.function_call_arguments.delta` events on the Responses face.
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { ChatCompletionChunk } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const WRITE_FILE = {
  type: "function" as const,
  function: {
    name: "write_file",
    description: "Write a file.",
    parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] },
  },
};
const CONTENT = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
const ARGS = JSON.stringify({ path: "notes.txt", content: CONTENT }).replace(/":"/g, '": "').replace(/","/g, '", "');
const REPLY = `<tool_call>\n{"name": "write_file", "arguments": ${ARGS}}\n</tool_call>`;
/** 200 words are ~400 scripted tokens; 1 ms apart the stream lasts well over 400 ms. */
const TOKEN_DELAY_MS = 1;
const BODY = { model: MODEL, messages: [user("Write notes.txt")], tools: [WRITE_FILE], reasoning_effort: "none" as const };

describe("tool-call arguments stream as generated", () => {
  it("createClient: a long write_file call arrives in many tool_calls deltas, the first long before the call closes", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: TOKEN_DELAY_MS });
    const stream = (await client.chat.completions.create({ ...BODY, stream: true })) as AsyncIterable<ChatCompletionChunk>;
    let t0: number | undefined;
    const argStamps: number[] = [];
    let args = "";
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      t0 ??= performance.now(); // the stream's first chunk: generation has begun
      const choice = chunk.choices[0];
      for (const call of choice?.delta.tool_calls ?? []) {
        name ??= call.function?.name;
        if (call.function?.arguments) {
          args += call.function.arguments;
          argStamps.push(performance.now() - t0!);
        }
      }
      finish = choice?.finish_reason ?? finish;
    }
    const total = performance.now() - t0!;
    expect(name).toBe("write_file");
    expect(JSON.parse(args)).toEqual({ path: "notes.txt", content: CONTENT });
    expect(finish).toBe("tool_calls");
    expect(argStamps.length).toBeGreaterThan(100);
    // The first fragment comes in the first tenth of the stream, not when the call closes.
    expect(argStamps[0]).toBeLessThan(total / 10);
  });

  it("openai SDK on client.fetch: the same call streams in many chunks", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: TOKEN_DELAY_MS });
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", fetch: client.fetch });
    const stream = await openai.chat.completions.create({ ...BODY, stream: true } as never);
    let chunksWithArgs = 0;
    let args = "";
    let finish: string | null = null;
    for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) {
      const fragment = chunk.choices[0]?.delta.tool_calls?.map((c) => c.function?.arguments ?? "").join("") ?? "";
      if (fragment) chunksWithArgs++;
      args += fragment;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(chunksWithArgs).toBeGreaterThan(100);
    expect(JSON.parse(args)).toEqual({ path: "notes.txt", content: CONTENT });
    expect(finish).toBe("tool_calls");
  });

  it("Responses: response.function_call_arguments.delta events come as generated, before .done", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: TOKEN_DELAY_MS });
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", fetch: client.fetch });
    const stream = await openai.responses.create({ model: MODEL, input: "Write notes.txt", tools: [{ type: "function", name: "write_file", parameters: WRITE_FILE.function.parameters, strict: false }], reasoning: { effort: "none" } as never, stream: true });
    const types: string[] = [];
    let deltas = "";
    let done = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.function_call_arguments.delta") deltas += event.delta;
      if (event.type === "response.function_call_arguments.done") done = event.arguments;
    }
    const deltaCount = types.filter((t) => t === "response.function_call_arguments.delta").length;
    expect(deltaCount).toBeGreaterThan(100);
    expect(types.lastIndexOf("response.function_call_arguments.delta")).toBeLessThan(types.indexOf("response.function_call_arguments.done"));
    expect(deltas).toBe(done);
    expect(JSON.parse(done)).toEqual({ path: "notes.txt", content: CONTENT });
  });

  it("a call the output cuts streams too, and ends with finish_reason length and the arguments it has", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: 0 });
    const stream = (await client.chat.completions.create({ ...BODY, max_tokens: 120, stream: true })) as AsyncIterable<ChatCompletionChunk>;
    let args = "";
    let chunksWithArgs = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const fragment = chunk.choices[0]?.delta.tool_calls?.map((c) => c.function?.arguments ?? "").join("") ?? "";
      if (fragment) chunksWithArgs++;
      args += fragment;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("length");
    expect(chunksWithArgs).toBeGreaterThan(50);
    const parsed = JSON.parse(args) as { path: string; content: string };
    expect(parsed.path).toBe("notes.txt");
    expect(CONTENT.startsWith(parsed.content)).toBe(true);
    expect(parsed.content.length).toBeGreaterThan(50);
    expect(parsed.content.length).toBeLessThan(CONTENT.length);
  });
});
