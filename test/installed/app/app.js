// A new user's app: a scripted model record (no GPU, no download), streamed
// directly and through the OpenAI SDK. main.js runs it with the default worker,
// main-hosted.js with a worker the app hosts itself (webgpu-openai/worker).
import { createClient } from "webgpu-openai";
import OpenAI from "openai";

const model = "Qwen3-Scripted-q4f32_1-MLC";
const record = {
  model: "https://models.invalid/Qwen3-Scripted-MLC",
  model_id: model,
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  engine: { kind: "scripted", replies: ["Hello from the worker.", "Hello through the SDK."] },
};

async function run(worker) {
  const client = createClient(worker ? { worker, models: [record] } : { models: [record] });
  const messages = [{ role: "user", content: "hi" }];
  let direct = "";
  const stream = await client.chat.completions.create({ model, messages, stream: true });
  for await (const chunk of stream) direct += chunk.choices[0]?.delta?.content ?? "";
  const openai = new OpenAI({ apiKey: "local", baseURL: "http://localhost.webgpu/v1", fetch: client.fetch, dangerouslyAllowBrowser: true });
  let sdk = "";
  const sdkStream = await openai.chat.completions.create({ model, messages, stream: true });
  for await (const chunk of sdkStream) sdk += chunk.choices[0]?.delta?.content ?? "";
  return { direct, sdk, worker: (await client.workerInfo()).worker };
}

/** Runs the app; the page reads `globalThis.__result`. */
export function start(worker) {
  run(worker).then(
    (result) => (globalThis.__result = result),
    (error) => (globalThis.__result = { error: `${error?.name}: ${error?.message ?? error}` }),
  );
}
