/**
 * Compaction (`POST /responses/compact`, `client.responses.compact`): the
 * model summarises the older turns; the compaction item holds the summary and
 * the recent turns verbatim, and is accepted back as input in their place, so
 * the next prompt is short.
 */
import { describe, expect, it } from "vitest";
import type { EngineRequest } from "../../src/index.js";
import {
  COMPACTION_PREFIX,
  SUMMARY_HEADING,
  compactionItem,
  expandCompactionItems,
  splitForCompaction,
  validateCompactRequest,
} from "../../src/protocol/responses/compact.js";
import { scriptedClient } from "./support/client.js";

const MODEL = "Qwen2.5-0.5B-Instruct";
const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
const msg = (role: string, content: string) => ({ type: "message", role, content });

const history = [
  msg("user", "My name is Alice."),
  msg("assistant", "Hello Alice!"),
  msg("user", "Tell me about Paris, the capital of France, in great detail please."),
  msg("assistant", "Paris is the capital of France. ".repeat(40)),
  msg("user", "And its weather?"),
  msg("assistant", "Mild, with rain in autumn."),
];

const SUMMARY = "Alice asked about Paris, the capital of France.";
const reply = (request: EngineRequest) => (promptText(request).includes("Summarize the conversation above") ? SUMMARY : "Your name is Alice.");

describe("compaction: pure parts", () => {
  it("splits at the last user turn; nothing older → everything recent", () => {
    expect(splitForCompaction(history)).toEqual({ older: history.slice(0, 4), recent: history.slice(4) });
    expect(splitForCompaction(history, 2)).toEqual({ older: history.slice(0, 2), recent: history.slice(2) });
    expect(splitForCompaction([msg("assistant", "hi")])).toEqual({ older: [], recent: [msg("assistant", "hi")] });
  });

  it("an item round-trips: opaque string with our prefix, expanded into the summary note and the recent items", () => {
    const item = compactionItem("Summary text — with ünïcödé ✓", history.slice(4));
    expect(item.type).toBe("compaction");
    expect(item.id).toMatch(/^cmp_/);
    expect(item.encrypted_content.startsWith(COMPACTION_PREFIX)).toBe(true);
    expect(item.encrypted_content).not.toContain("Summary text");
    const expanded = expandCompactionItems([item, msg("user", "next")]);
    expect(expanded).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: `${SUMMARY_HEADING}\nSummary text — with ünïcödé ✓` }] },
      ...history.slice(4),
      msg("user", "next"),
    ]);
    // nested: a compaction item inside a compaction item expands fully
    const outer = compactionItem("outer", [item]);
    expect(expandCompactionItems([outer])).toHaveLength(1 + 1 + 2);
  });

  it("damaged or foreign items are 400s naming the field", () => {
    const item = compactionItem(null, []);
    for (const encrypted_content of ["gAAAAB-hosted-ciphertext", `${COMPACTION_PREFIX}!!!`, undefined]) {
      expect(() => expandCompactionItems([msg("user", "x"), { ...item, encrypted_content }])).toThrowError(expect.objectContaining({ status: 400, param: "input[1].encrypted_content" }));
    }
  });

  it("the request: model required; unknown fields refused; nothing to compact refused", () => {
    expect(() => validateCompactRequest({ input: history })).toThrowError(expect.objectContaining({ status: 400, param: "model", code: "missing_required_parameter" }));
    expect(() => validateCompactRequest({ model: MODEL, input: history, stream: true })).toThrowError(expect.objectContaining({ status: 400, param: "stream" }));
    expect(() => validateCompactRequest({ model: MODEL })).toThrowError(expect.objectContaining({ status: 400, param: "input" }));
    expect(validateCompactRequest({ model: MODEL, input: "hi" }).input).toEqual([{ type: "message", role: "user", content: "hi" }]);
  });
});

describe("compaction through the client", () => {
  it("client.responses.compact summarises the older turns; the item sent back gives a shorter prompt with the same facts", async () => {
    const { client, engine } = scriptedClient(reply);
    const compacted = await client.responses.compact({ model: MODEL, input: history });
    expect(compacted).toMatchObject({ object: "response.compaction", output: [{ type: "compaction" }] });
    expect(compacted.id).toMatch(/^resp_/);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
    expect(engine.requests).toHaveLength(1);
    // the summarizer saw the older turns, not the recent ones
    expect(promptText(engine.requests[0])).toContain("My name is Alice.");
    expect(promptText(engine.requests[0])).not.toContain("And its weather?");
    // nothing stored for the summarizing turn
    const full = await client.responses.create({ model: MODEL, input: [...history, msg("user", "What is my name?")] });
    const short = await client.responses.create({ model: MODEL, input: [...compacted.output, msg("user", "What is my name?")] });
    expect(short.output_text ?? (short.output[0] as { content: { text: string }[] }).content[0].text).toBe("Your name is Alice.");
    expect(short.usage!.input_tokens).toBeLessThan(full.usage!.input_tokens);
    const prompt = promptText(engine.requests.at(-1)!);
    expect(prompt).toContain(SUMMARY);
    expect(prompt).toContain("And its weather?"); // recent turns verbatim
    expect(prompt).not.toContain("Paris is the capital of France. Paris");
  });

  it("the summarizer runs with thinking off (a reasoning model's summary is its answer text)", async () => {
    // With thinking off web-llm streams an empty think block first (the scripted engine does too): not part of the summary.
    const { client, engine } = scriptedClient([SUMMARY]);
    const compacted = await client.responses.compact({ model: "Qwen3-0.6B", input: history });
    expect(engine.requests[0].thinking.enabled).toBe(false);
    expect(expandCompactionItems(compacted.output)[0]).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: `${SUMMARY_HEADING}\n${SUMMARY}` }] });
  });

  it("a short conversation compacts without running the model", async () => {
    const { client, engine } = scriptedClient(reply);
    const compacted = await client.responses.compact({ model: MODEL, input: [msg("user", "hi")] });
    expect(engine.requests).toHaveLength(0);
    expect(compacted.usage.total_tokens).toBe(0);
    expect(expandCompactionItems(compacted.output)).toEqual([msg("user", "hi")]);
  });

  it("with previous_response_id the stored chain is summarised and the input kept verbatim", async () => {
    const { client, engine } = scriptedClient(["Hello Alice!", SUMMARY]);
    const first = await client.responses.create({ model: MODEL, input: "My name is Alice." });
    const compacted = await client.responses.compact({ model: MODEL, previous_response_id: first.id, input: [msg("user", "Next question.")] });
    expect(promptText(engine.requests[1])).toContain("My name is Alice.");
    expect(expandCompactionItems(compacted.output)).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: `${SUMMARY_HEADING}\n${SUMMARY}` }] },
      msg("user", "Next question."),
    ]);
  });

  it("POST /responses/compact over client.fetch: JSON CompactResource; missing model → 400", async () => {
    const { client } = scriptedClient(reply);
    const ok = await client.fetch("http://localhost.webgpu/v1/responses/compact", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, input: history }) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ object: "response.compaction", output: [{ type: "compaction", encrypted_content: expect.stringMatching(/^wgo-compaction\.v1\./) }] });
    const bad = await client.fetch("http://localhost.webgpu/v1/responses/compact", { method: "POST", body: JSON.stringify({ input: history }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "model", type: "invalid_request_error" } });
  });
});
