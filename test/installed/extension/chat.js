// What each host of the client does: a streamed reply, then the same through the OpenAI SDK on client.fetch.
import OpenAI from "openai";
import { model } from "./record.js";

export async function chat(client) {
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

/** Whether this context may compile WebAssembly (web-llm's model library is wasm): "ok" or the error. */
export async function wasmProbe() {
  try {
    await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    return "ok";
  } catch (error) {
    return `${error?.name}: ${error?.message}`;
  }
}

export const failure = (error) => ({ error: `${error?.name}: ${error?.message ?? error}`, status: error?.status, code: error?.code });
