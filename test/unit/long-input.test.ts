/**
 * A request far longer than any context window is refused as too long (400
 * context_length_exceeded), never crashes the pipeline: arrays of token ids
 * whose size the request decides are never spread into function arguments
 * (which overflows the call stack past ~100 k elements).
 */
import { describe, expect, it } from "vitest";
import { refusal, scriptedClient, user } from "./support/client.js";
import { promptTokens } from "../../src/engine/webllm/prompt-cache/webllm-binding.js";
import { webmStream } from "../../src/audio/webm.js";
import { UNKNOWN_LIMIT_SECONDS } from "../../src/audio/packets.js";

const FIVE_MB = "word ".repeat(1_000_000);
const TWO_MB = "rule ".repeat(400_000);
const model = "Qwen3-0.6B-q4f16_1-MLC";

describe("a very long input is a 400, not a crash", { timeout: 60_000 }, () => {
  it("a 5 MB user message → 400 context_length_exceeded (chat, streamed or not)", async () => {
    const { client } = scriptedClient(["never"]);
    expect(await refusal(client.chat.completions.create({ model, messages: [user(FIVE_MB)] }))).toMatchObject({ status: 400, code: "context_length_exceeded" });
    expect(await refusal(client.chat.completions.create({ model, messages: [user(FIVE_MB)], stream: true }))).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("a 5 MB user message through client.fetch → a 400 JSON error", async () => {
    const { client } = scriptedClient(["never"]);
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [user(FIVE_MB)] }) });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: "context_length_exceeded" });
  });

  it("2 MB of Responses instructions → 400 context_length_exceeded", async () => {
    const { client } = scriptedClient(["never"]);
    expect(await refusal(client.responses.create({ model, instructions: TWO_MB, input: "hi" }))).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("the client still serves a normal request afterwards", async () => {
    const { client } = scriptedClient(["fine"]);
    await refusal(client.chat.completions.create({ model, messages: [user(FIVE_MB)] }));
    const completion = await client.chat.completions.create({ model, messages: [user("hi")] });
    expect(completion.choices[0].message.content).toBe("fine");
  });

  it("the web-llm binding reads a prompt of 500 k token ids in one chunk", () => {
    const ids = Array.from({ length: 500_000 }, (_, i) => i % 1000);
    expect(promptTokens([ids], ids.length).tokens).toHaveLength(500_000);
  });

  it("a WebM file whose codec id is a megabyte long is read without overflowing", () => {
    const size = 1 << 20;
    const header = [0x1a, 0x45, 0xdf, 0xa3, 0x80, 0xae, 0xff, 0x86, 0x10, size >> 16, (size >> 8) & 0xff, size & 0xff];
    const bytes = new Uint8Array(header.length + size).fill(0x41);
    bytes.set(header);
    let error: unknown = null;
    try {
      webmStream(bytes, { maxSeconds: UNKNOWN_LIMIT_SECONDS, limit: "no limit known" });
    } catch (e) {
      error = e;
    }
    expect(error).not.toBeInstanceOf(RangeError);
  });
});
