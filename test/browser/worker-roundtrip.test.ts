import { describe, expect, it } from "vitest";
import { createClient, ApiError } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

describe("through the worker", () => {
  it("streams from a scripted engine inside the worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: ["One two three."] }) });
    const stream = await client.chat.completions.create({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("One two three.");
    client.terminate();
  });

  it("keeps error fields across the worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [] }) });
    const error = await client.chat.completions.create({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], temperature: 9 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, param: "temperature", type: "invalid_request_error" });
    client.terminate();
  });

  it("sees the SwiftShader adapter", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [] }) });
    const gpu = await client.gpu.info();
    expect(gpu.available).toBe(true);
    if (gpu.available) expect(gpu.info.architecture).toBe("swiftshader");
    client.terminate();
  });
});
