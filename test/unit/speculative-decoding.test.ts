/**
 * Speculative decoding as an app sees it, through createClient and the
 * scripted engine (which simulates it on its own tokens): `prediction`
 * (OpenAI's Predicted Outputs) validated and used as a draft source, its usage
 * counts, `x_webgpu` pass and draft counts in chat and Responses, and
 * `createClient({ speculative: false })`. The output never changes.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { refusal, scriptedClient, user } from "./support/client.js";
import type { ChatCompletionChunk } from "../../src/index.js";
import { hostFromConfig } from "../../src/worker/expose.js";

const model = "Qwen3-0.6B-q4f16_1-MLC";
const FILE = Array.from({ length: 30 }, (_, i) => `const value${i} = compute(${i}, "item ${i}");`).join("\n");
const EDITED = FILE.replace("value12", "renamed12");

function clientWith(replies: string[], speculative?: boolean) {
  const engine = createScriptedEngine({ replies });
  return { client: createClient({ engine, worker: false, ...(speculative !== undefined ? { speculative } : {}) }), engine };
}

describe("prediction: validation", () => {
  const cases: Array<[unknown, string]> = [
    ["text", "prediction"],
    [{ type: "other", content: "x" }, "prediction.type"],
    [{ type: "content", content: 3 }, "prediction.content"],
    [{ type: "content", content: [{ type: "image_url", image_url: "x" }] }, "prediction.content[0]"],
    [{ type: "content", content: [{ type: "text", text: "a" }, { type: "text" }] }, "prediction.content[1]"],
  ];
  for (const [prediction, param] of cases) {
    it(`refuses ${JSON.stringify(prediction)} naming ${param}`, async () => {
      const { client } = scriptedClient(["x"]);
      expect(await refusal(client.chat.completions.create({ model, messages: [user("hi")], prediction } as never))).toMatchObject({ status: 400, param });
    });
  }

  it("passes the text (parts joined) to the engine", async () => {
    const { client, engine } = scriptedClient(["ab", "ab"]);
    await client.chat.completions.create({ model, messages: [user("hi")], prediction: { type: "content", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] } });
    await client.chat.completions.create({ model, messages: [user("hi")], prediction: null });
    expect(engine.requests[0].prediction).toBe("ab");
    expect(engine.requests[1]).not.toHaveProperty("prediction");
  });
});

describe("prediction: a source of drafts, reported as OpenAI does", () => {
  it("an edit with the file as prediction: same output, a fraction of the passes, prediction counts", async () => {
    const messages = [user(`Rename value12 to renamed12:\n${FILE}`)];
    const on = clientWith([EDITED, EDITED]);
    const plain = await on.client.chat.completions.create({ model, messages, prompt_cache_key: "a" });
    const predicted = await on.client.chat.completions.create({ model, messages: [user(`Rename value12 to renamed12 please:\n${FILE}`)], prediction: { type: "content", content: FILE } });
    expect(predicted.choices[0].message.content).toBe(EDITED);
    expect(plain.choices[0].message.content).toBe(EDITED);
    const tokens = predicted.usage.completion_tokens;
    expect(predicted.x_webgpu.decode_passes / tokens).toBeLessThanOrEqual(0.35);
    expect(predicted.x_webgpu.accepted_draft_tokens).toBeGreaterThan(tokens * 0.6);
    const details = predicted.usage.completion_tokens_details;
    expect(details.accepted_prediction_tokens).toBeGreaterThan(tokens * 0.6);
    expect(details.rejected_prediction_tokens).toBeGreaterThan(0);
    expect(plain.usage.completion_tokens_details, "no prediction: no prediction counts").toEqual({ reasoning_tokens: 0 });
  });

  it("a prediction longer than the reply can reach is cut to max_tokens × 16 characters before the engine tokenizes it, and still drafts", async () => {
    const { client, engine } = clientWith([EDITED]);
    const huge = `${FILE}\n${"// trailing text no reply of this size can reach\n".repeat(100_000)}`; // ~4.9 MB
    const r = await client.chat.completions.create({ model, messages: [user(`Rename value12 to renamed12:\n${FILE}`)], max_tokens: 600, prediction: { type: "content", content: huge } });
    expect(r.choices[0].message.content).toBe(EDITED);
    const sent = engine.requests[0].prediction ?? "";
    expect(sent.length).toBe(600 * 16);
    expect(huge.startsWith(sent)).toBe(true);
    expect(r.usage.completion_tokens_details.accepted_prediction_tokens).toBeGreaterThan(r.usage.completion_tokens * 0.6);
  });

  it("speculative: false decodes one token per pass; the output is the same; the whole prediction is rejected", async () => {
    const off = clientWith([EDITED], false);
    const r = await off.client.chat.completions.create({ model, messages: [user(`Rename:\n${FILE}`)], prediction: { type: "content", content: FILE } });
    expect(r.choices[0].message.content).toBe(EDITED);
    expect(off.engine.requests[0].speculative).toBe(false);
    expect(r.x_webgpu).toMatchObject({ decode_passes: r.usage.completion_tokens, draft_tokens: 0, accepted_draft_tokens: 0 });
    expect(r.usage.completion_tokens_details.accepted_prediction_tokens).toBe(0);
    expect(r.usage.completion_tokens_details.rejected_prediction_tokens).toBeGreaterThan(100);
  });

  it("combines with tools, logprobs and penalties; streamed usage carries the counts", async () => {
    const call = '<tool_call>\n{"name": "save", "arguments": {"text": "Meet Anna at 5 pm on the bridge"}}\n</tool_call>';
    const tools = [{ type: "function" as const, function: { name: "save", parameters: { type: "object", properties: { text: { type: "string" } } } } }];
    const run = async (speculative: boolean) => {
    const { client } = clientWith([call], speculative);
    const stream = await client.chat.completions.create({
      model,
      messages: [user("Save this note: Meet Anna at 5 pm on the bridge")],
      tools,
      logprobs: true,
      top_logprobs: 1,
      frequency_penalty: 0.5,
      stream: true,
      stream_options: { include_usage: true },
      prediction: { type: "content", content: call },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return chunks;
    };
    const chunks = await run(true);
    const last = chunks.at(-1)!;
    const args = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((d) => d.function!.arguments).join("");
    expect(JSON.parse(args)).toEqual({ text: "Meet Anna at 5 pm on the bridge" });
    // Call ids are random per call: compared without them.
    const visible = (cs: ChatCompletionChunk[]) => JSON.stringify(cs.map((c) => ({ delta: c.choices[0]?.delta, logprobs: c.choices[0]?.logprobs, finish: c.choices[0]?.finish_reason }))).replace(/call_[A-Za-z0-9]+/g, "call");
    expect(visible(chunks), "the same chunks, logprobs included, as without speculation").toEqual(visible(await run(false)));
    expect(last.usage!.completion_tokens_details.accepted_prediction_tokens).toBeGreaterThan(10);
    expect(last.usage!.completion_tokens_details.rejected_prediction_tokens).toBe(0);
    expect(last.x_webgpu!.decode_passes).toBeLessThan(last.usage!.completion_tokens / 3);
  });

  it("n = 2 sums the counts of both choices", async () => {
    const { client } = scriptedClient(["one two three four five six", "one two three four five six"]);
    const r = await client.chat.completions.create({ model, messages: [user("count")], n: 2, prediction: { type: "content", content: "one two three four five six" } });
    // Six tokens per choice, all of them the prediction's.
    expect(r.usage.completion_tokens_details.accepted_prediction_tokens).toBe(12);
    expect(r.usage.completion_tokens_details.rejected_prediction_tokens).toBe(0);
  });
});

describe("stop strings", () => {
  it("drafted tokens past a stop string are not counted as accepted", async () => {
    const { client } = scriptedClient(["alpha beta gamma delta epsilon zeta eta theta"]);
    const r = await client.chat.completions.create({ model, messages: [user("x")], stop: [" gamma"], prediction: { type: "content", content: "alpha beta gamma delta epsilon zeta eta theta" } });
    expect(r.choices[0].message.content).toBe("alpha beta");
    // alpha (prefill), then one pass: beta gamma drafted and accepted, the rest cut by the stop.
    expect(r.x_webgpu.decode_passes).toBe(1);
    expect(r.x_webgpu.accepted_draft_tokens, "beta and gamma became output").toBe(2);
    expect(r.x_webgpu.draft_tokens).toBe(4);
  });
});

describe("regenerate: the reply the prompt cache holds is a draft source", () => {
  it("the same request again takes few passes and gives the same output", async () => {
    const reply = "A long answer that the model gives to this question, with many words in it, ".repeat(4).trim();
    const { client } = scriptedClient([reply, reply]);
    const first = await client.chat.completions.create({ model, messages: [user("Tell me something.")], temperature: 0 });
    const again = await client.chat.completions.create({ model, messages: [user("Tell me something.")], temperature: 0 });
    expect(again.choices[0].message.content).toBe(first.choices[0].message.content);
    expect(again.x_webgpu.decode_passes / again.usage.completion_tokens).toBeLessThanOrEqual(0.3);
    expect(again.x_webgpu.decode_passes).toBeLessThan(first.x_webgpu.decode_passes);
  });
});

describe("the cached reply drafts only for its own prompt_cache_key", () => {
  it("another key's regenerate gets no drafts from it (the same passes as a cold request); the key's own does", async () => {
    const reply = "A long answer that the model gives to this question, with many words in it, ".repeat(4).trim();
    const { client } = scriptedClient([reply, reply, reply, reply]);
    const ask = (key?: string) => client.chat.completions.create({ model, messages: [user("Tell me something.")], temperature: 0, ...(key ? { prompt_cache_key: key } : {}) });
    const first = await ask("x");
    const otherKey = await ask("y");
    const unkeyed = await ask();
    const sameKey = await ask("x");
    expect(otherKey.choices[0].message.content).toBe(first.choices[0].message.content);
    expect(otherKey.x_webgpu.decode_passes, "no draft from x's cached reply").toBe(first.x_webgpu.decode_passes);
    expect(unkeyed.x_webgpu.decode_passes, "nor for a request without a key").toBe(first.x_webgpu.decode_passes);
    expect(sameKey.x_webgpu.decode_passes).toBeLessThan(first.x_webgpu.decode_passes);
  });
});

describe("Responses report passes and drafts too", () => {
  it("x_webgpu on the response and on the streamed response.completed", async () => {
    const text = "The passage says: the bridge opens at five in the morning and closes at ten at night.";
    const input = `Passage: ${text}\nQuote the passage.`;
    const { client } = scriptedClient([text, text]);
    const response = await client.responses.create({ model, input });
    expect(response.x_webgpu!.decode_passes).toBeLessThan(response.usage!.output_tokens);
    expect(response.x_webgpu!.accepted_draft_tokens).toBeGreaterThan(0);
    const stream = await client.responses.create({ model, input: `${input}\nAgain.`, stream: true });
    let completed: { x_webgpu?: unknown } | null = null;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    expect(completed?.x_webgpu).toMatchObject({ decode_passes: expect.any(Number), draft_tokens: expect.any(Number), accepted_draft_tokens: expect.any(Number) });
  });
});

describe("createClient({ speculative })", () => {
  it("crosses to a worker's host with the other options (WorkerHostConfig)", async () => {
    const run = async (speculative: boolean | undefined) => {
      const host = hostFromConfig({ engine: { kind: "scripted", replies: [EDITED] }, speculative });
      return (await host.createChatCompletion({ model, messages: [user(`Rename:\n${FILE}`)] })).x_webgpu;
    };
    expect((await run(undefined)).accepted_draft_tokens).toBeGreaterThan(0);
    expect((await run(false)).draft_tokens).toBe(0);
  });

  it("refuses a value that is not a boolean", () => {
    expect(() => createClient({ engine: createScriptedEngine({ replies: [] }), worker: false, speculative: "off" as never })).toThrow(/speculative/);
  });
});

describe("the scripted engine's device profile: drafts sized by what a verify costs", () => {
  // An answer that copies some of its prompt and writes the rest itself.
  const passage = "The library opens at nine, closes at six on weekdays and at one on Saturdays; on Sundays it stays closed.";
  const answer = `It opens at nine. Quote: "${passage}" In short, plan your visit on a weekday afternoon, and bring your card along with a bag for the books you borrow.`;
  async function ask(device?: { verifyCostPerToken: number }, speculative = true) {
    const engine = createScriptedEngine({ replies: [answer], ...(device ? { device } : {}) });
    const client = createClient({ engine, worker: false, speculative });
    return client.chat.completions.create({ model, messages: [user(`${passage}\nWhen can I go? Quote the rules.`)] });
  }

  it("drafts long on a GPU-like device and little or nothing on a SwiftShader-like one; the output never changes", async () => {
    const gpu = await ask({ verifyCostPerToken: 0.2 });
    const swift = await ask({ verifyCostPerToken: 0.8 }); // a 5-token verify ≈ 4 steps
    const off = await ask(undefined, false);
    expect(gpu.choices[0].message.content).toBe(off.choices[0].message.content);
    expect(swift.choices[0].message.content).toBe(off.choices[0].message.content);
    expect(gpu.x_webgpu.draft_tokens).toBeGreaterThan(swift.x_webgpu.draft_tokens);
    expect(gpu.x_webgpu.decode_passes).toBeLessThan(swift.x_webgpu.decode_passes);
    expect(swift.x_webgpu.decode_passes).toBeLessThanOrEqual(off.x_webgpu.decode_passes);
  });

  it("a verify that costs as much as decoding its tokens one by one is never worth a draft", async () => {
    const r = await ask({ verifyCostPerToken: 1 });
    expect(r.x_webgpu.draft_tokens).toBe(0);
    expect(r.x_webgpu.decode_passes).toBe(r.usage.completion_tokens);
  });

  it("crosses to a worker's host with the engine's spec", () => {
    expect(createScriptedEngine({ replies: ["a"], device: { verifyCostPerToken: 0.8 } }).spec?.device).toEqual({ verifyCostPerToken: 0.8 });
  });
});

describe("grammar jump-forward, mirrored by the scripted engine", () => {
  const setUnit = {
    type: "function" as const,
    function: { name: "set_unit", description: "Sets the temperature unit.", parameters: { type: "object", properties: { unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["unit"] } },
  };
  const call = `<tool_call>\n{"name": "set_unit", "arguments": {"unit": "celsius"}}\n</tool_call>`;
  const body = { model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC", messages: [user("Switch to celsius.")], tools: [setUnit] };

  it("a forced call: its opening markup drafted from the grammar and counted in x_webgpu.jump_forward_tokens; the same call", async () => {
    const forced = await clientWith([call]).client.chat.completions.create({ ...body, tool_choice: { type: "function", function: { name: "set_unit" } } });
    const off = await clientWith([call], false).client.chat.completions.create({ ...body, tool_choice: { type: "function", function: { name: "set_unit" } } });
    expect(forced.choices[0].message.tool_calls!.map((c) => c.function)).toEqual(off.choices[0].message.tool_calls!.map((c) => c.function));
    expect(forced.choices[0].message.tool_calls![0].function).toMatchObject({ name: "set_unit", arguments: '{"unit": "celsius"}' });
    expect(forced.x_webgpu.jump_forward_tokens).toBeGreaterThanOrEqual(10);
    expect(forced.x_webgpu.jump_forward_tokens).toBeLessThanOrEqual(forced.x_webgpu.draft_tokens);
    expect(forced.x_webgpu.decode_passes).toBeLessThan(forced.usage.completion_tokens / 2);
    expect(off.x_webgpu.jump_forward_tokens).toBeUndefined();
  });

  it("an auto call: once the trigger is out, the rest of the call's opening is forced", async () => {
    const r = await clientWith([call]).client.chat.completions.create({ ...body, tool_choice: "auto" });
    expect(r.choices[0].message.tool_calls![0].function.name).toBe("set_unit");
    expect(r.x_webgpu.jump_forward_tokens).toBeGreaterThan(0);
  });

  it("no grammar, no jump-forward drafts", async () => {
    const r = await clientWith(["It is set to celsius now."]).client.chat.completions.create({ ...body, tools: undefined });
    expect(r.x_webgpu.jump_forward_tokens).toBeUndefined();
  });
});
