/**
 * The drop-in view's Responses half: the same conversation sent through the
 * unchanged `openai` SDK's `responses.create` (the API the SDK recommends for
 * new code), streamed from `client.fetch`. The code shown is the code that runs.
 */
import type OpenAI from "openai-v7";
import type { ChatMessage } from "../../src/index.js";

export const RESPONSES_SNIPPET = `import OpenAI from "openai";
import { createClient } from "webgpu-openai";

const local = createClient();
const openai = new OpenAI({
  baseURL: "https://local.invalid/v1", // any URL: client.fetch answers it
  apiKey: "unused",
  fetch: local.fetch,
  dangerouslyAllowBrowser: true,
});

const stream = await openai.responses.create({
  model: "Qwen3-0.6B",
  input, // the conversation as Responses items
  stream: true,
});
for await (const event of stream) {
  if (event.type === "response.output_text.delta") output += event.delta;
}`;

const text = (content: ChatMessage["content"]): string =>
  typeof content === "string" ? content : (content ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

/** Chat messages as Responses input items: messages, function calls and their outputs. */
export function toResponsesInput(messages: ChatMessage[]): OpenAI.Responses.ResponseInputItem[] {
  const items: OpenAI.Responses.ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      items.push({ type: "function_call_output", call_id: message.tool_call_id ?? "", output: text(message.content) });
      continue;
    }
    const body = text(message.content);
    if (message.role === "assistant") {
      if (body) items.push({ type: "message", role: "assistant", content: body });
      for (const call of message.tool_calls ?? []) items.push({ type: "function_call", call_id: call.id, name: call.function.name, arguments: call.function.arguments });
      continue;
    }
    items.push({ type: "message", role: message.role === "user" ? "user" : message.role === "developer" ? "developer" : "system", content: body });
  }
  return items;
}

/** Streams the reply's text through `openai.responses.create`, calling `onText` with the text so far. */
export async function streamThroughResponses(openai: OpenAI, model: string, messages: ChatMessage[], signal: AbortSignal, onText: (text: string) => void): Promise<void> {
  const stream = await openai.responses.create({ model, input: toResponsesInput(messages), stream: true, store: false }, { signal });
  let output = "";
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") onText((output += event.delta));
    if (event.type === "response.failed") throw new Error(event.response.error?.message ?? "The response failed.");
  }
}
