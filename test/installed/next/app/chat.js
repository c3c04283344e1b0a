"use client";
// A client component: the default worker (no `worker:` option), a scripted model record, a reply
// streamed directly and through the OpenAI SDK on client.fetch. The test reads globalThis.__result.
import { useEffect, useState } from "react";
import { createClient } from "webgpu-openai";
import OpenAI from "openai";

const model = "Qwen3-Scripted-q4f32_1-MLC";
const record = {
  model: "https://models.invalid/Qwen3-Scripted-MLC",
  model_id: model,
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  engine: { kind: "scripted", replies: ["Hello from Next.", "Hello through the SDK."] },
};

async function run(server, show) {
  const client = createClient({ models: [record] });
  const messages = [{ role: "user", content: "hi" }];
  let direct = "";
  const stream = await client.chat.completions.create({ model, messages, stream: true });
  for await (const chunk of stream) show((direct += chunk.choices[0]?.delta?.content ?? ""));
  const openai = new OpenAI({ apiKey: "local", baseURL: "http://localhost.webgpu/v1", fetch: client.fetch, dangerouslyAllowBrowser: true });
  let sdk = "";
  const sdkStream = await openai.chat.completions.create({ model, messages, stream: true });
  for await (const chunk of sdkStream) sdk += chunk.choices[0]?.delta?.content ?? "";
  const result = { direct, sdk, worker: (await client.workerInfo()).worker, server };
  client.terminate();
  return result;
}

export default function Chat({ server }) {
  const [text, setText] = useState("");
  useEffect(() => {
    // StrictMode runs effects twice in development: answer once.
    if (globalThis.__started) return;
    globalThis.__started = true;
    run(server, setText).then(
      (result) => (globalThis.__result = result),
      (error) => (globalThis.__result = { error: `${error?.name}: ${error?.message ?? error}` }),
    );
  }, [server]);
  return <p id="reply">{text}</p>;
}
