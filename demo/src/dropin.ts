/**
 * The drop-in view: the chat's conversation sent through the unchanged
 * `openai` SDK, with `client.fetch` as its fetch, by Chat Completions or by the
 * Responses API (a toggle). The code shown is the code that runs.
 */
import OpenAI from "openai-v7";
import type { ChatMessage, Client } from "../../src/index.js";
import { h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { RESPONSES_SNIPPET, streamThroughResponses } from "./dropin-responses.js";

const SNIPPET = `import OpenAI from "openai";
import { createClient } from "webgpu-openai";

const local = createClient();
const openai = new OpenAI({
  baseURL: "https://local.invalid/v1", // any URL: client.fetch answers it
  apiKey: "unused",
  fetch: local.fetch,
  dangerouslyAllowBrowser: true,
});

const stream = await openai.chat.completions.create({
  model: "Qwen3-0.6B",
  messages,
  stream: true,
});
for await (const chunk of stream) {
  output += chunk.choices[0]?.delta?.content ?? "";
}`;

export function createDropIn(client: Client, messages: () => ChatMessage[], model: () => string): HTMLElement {
  const openai = new OpenAI({ baseURL: "https://local.invalid/v1", apiKey: "unused", fetch: client.fetch, dangerouslyAllowBrowser: true });
  const output = h("div", { class: "content", id: "dropin-output" });
  const status = h("small", { class: "muted" });
  const run = h("button", { class: "primary", id: "dropin-run" }, "Run this conversation through the OpenAI SDK");
  let controller: AbortController | null = null;
  const code = h("code", {}, SNIPPET);
  const api = h("select", { id: "dropin-api", "aria-label": "API" }, h("option", { value: "chat" }, "chat.completions"), h("option", { value: "responses" }, "responses"));
  api.addEventListener("change", () => { code.textContent = api.value === "responses" ? RESPONSES_SNIPPET : SNIPPET; });

  run.addEventListener("click", async () => {
    if (controller) return controller.abort();
    const history = messages();
    const conversation = history.length > 0 ? history : [{ role: "user" as const, content: "Say hello in five words." }];
    controller = new AbortController();
    run.textContent = "Stop";
    output.innerHTML = "";
    status.textContent = `Sending ${conversation.length} message(s) to ${model()}…`;
    let text = "";
    try {
      if (api.value === "responses") {
        await streamThroughResponses(openai, model(), conversation, controller.signal, (sofar) => { output.innerHTML = renderMarkdown(sofar); });
      } else {
        const stream = await openai.chat.completions.create(
          { model: model(), messages: conversation as OpenAI.Chat.ChatCompletionMessageParam[], stream: true },
          { signal: controller.signal },
        );
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? "";
          output.innerHTML = renderMarkdown(text);
        }
      }
      status.textContent = "Done: the unchanged OpenAI SDK streamed this reply from the model in your GPU.";
    } catch (error) {
      status.textContent = controller.signal.aborted ? "Stopped." : `Error: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      controller = null;
      run.textContent = "Run this conversation through the OpenAI SDK";
    }
  });

  return h(
    "section",
    { class: "dropin", id: "dropin", "aria-label": "OpenAI SDK drop-in" },
    h("p", {}, "Your existing OpenAI code works unchanged: give the SDK ", h("code", {}, "client.fetch"), ". This runs the chat's conversation again through ", h("code", {}, "openai"), " v7:"),
    h("label", {}, "API: ", api),
    h("pre", { class: "snippet" }, code),
    run,
    status,
    h("article", { class: "msg assistant" }, output),
  );
}
