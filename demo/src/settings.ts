/**
 * The chat settings form: sampling, reasoning effort, system prompt, tools and
 * tool_choice. `read()` turns it into the request fields it controls.
 */
import type { ChatCompletionCreateParams, ReasoningEffort, ToolChoice } from "../../src/index.js";
import { h } from "./dom.js";
import { pageTools } from "./tools.js";

export interface ChatSettings {
  element: HTMLElement;
  systemPrompt(): string;
  /** The request fields these settings set (everything but model and messages). */
  requestFields(): Partial<ChatCompletionCreateParams>;
}

const EFFORTS: (ReasoningEffort | "")[] = ["", "none", "low", "medium", "high"];

export function createSettings(): ChatSettings {
  const temperature = h("input", { type: "number", id: "temperature", min: "0", max: "2", step: "0.1", value: "0.7" });
  const topP = h("input", { type: "number", id: "top-p", min: "0", max: "1", step: "0.05", value: "0.95" });
  const maxTokens = h("input", { type: "number", id: "max-tokens", min: "1", step: "1", value: "1024" });
  const effort = h("select", { id: "reasoning-effort" }, ...EFFORTS.map((e) => h("option", { value: e }, e === "" ? "model default" : e)));
  const system = h("textarea", { id: "system-prompt", rows: 2, placeholder: "You are a helpful assistant." });
  const toolsOn = h("input", { type: "checkbox", id: "tools-enabled", checked: true });
  const toolChoice = h(
    "select",
    { id: "tool-choice" },
    h("option", { value: "auto" }, "auto"),
    h("option", { value: "none" }, "none"),
    h("option", { value: "required" }, "required"),
    ...pageTools.map((t) => h("option", { value: `fn:${t.definition.function.name}` }, `only ${t.definition.function.name}`)),
  );
  const field = (label: string, input: HTMLElement, hint?: string) =>
    h("label", { class: "field" }, h("span", {}, label), input, hint ? h("small", {}, hint) : null);

  const element = h(
    "details",
    { class: "settings" },
    h("summary", {}, "Settings"),
    h(
      "div",
      { class: "settings-grid" },
      field("Temperature", temperature),
      field("top_p", topP),
      field("Max tokens", maxTokens),
      field("Reasoning effort", effort, "none turns thinking off"),
      field("Tools", h("span", { class: "inline" }, toolsOn, " calculator, date/time, units, search")),
      field("tool_choice", toolChoice),
      h("label", { class: "field wide" }, h("span", {}, "System prompt"), system),
    ),
  );

  const number = (input: HTMLInputElement) => (input.value.trim() === "" ? undefined : Number(input.value));

  return {
    element,
    systemPrompt: () => system.value.trim(),
    requestFields() {
      const choice = toolChoice.value;
      const tool_choice: ToolChoice = choice.startsWith("fn:") ? { type: "function", function: { name: choice.slice(3) } } : (choice as ToolChoice);
      return {
        temperature: number(temperature),
        top_p: number(topP),
        max_tokens: number(maxTokens),
        ...(effort.value ? { reasoning_effort: effort.value as ReasoningEffort } : {}),
        ...(toolsOn.checked ? { tools: pageTools.map((t) => t.definition), tool_choice } : {}),
      };
    },
  };
}
