import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

describe("smoke", () => {
  it("answers and streams", async () => {
    const engine = createScriptedEngine({ replies: ["Hello there, friend.", "Second reply."] });
    const client = createClient({ engine, worker: false });
    const completion = await client.chat.completions.create({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0].message.content).toBe("Hello there, friend.");
    const stream = await client.chat.completions.create({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
    let text = "";
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe("Second reply.");
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(3);
    expect(engine.requests[0].model).toBe("Qwen3-0.6B-q4f32_1-MLC");
  });
});
