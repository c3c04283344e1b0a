/**
 * How one assistant turn looks: a collapsible reasoning block, the reply as
 * markdown, tool call cards (call → arguments → result) and the reply's
 * metrics. The same view renders a reply while it streams and after.
 */
import type { ToolCall } from "../../src/index.js";
import { h, replace } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

export interface ReplyMetrics {
  /** Time to first token as the page saw it (request sent → first delta). */
  ttftMs: number | null;
  tokensPerS: number | null;
  promptTokens: number | null;
  cachedTokens: number | null;
  completionTokens: number | null;
  finish: string;
}

export interface AssistantTurn {
  reasoning: string;
  content: string;
  toolCalls: ToolCall[];
  /** Tool results by tool_call_id, once the page has run them. */
  results: Map<string, string>;
  metrics: ReplyMetrics | null;
  streaming: boolean;
}

export class AssistantView {
  readonly element: HTMLElement;
  private readonly reasoning: HTMLDetailsElement;
  private readonly reasoningSummary: HTMLElement;
  private readonly reasoningBody: HTMLElement;
  private readonly content: HTMLElement;
  private readonly tools: HTMLElement;
  private readonly metrics: HTMLElement;
  private readonly actions: HTMLElement;
  private userToggled = false;

  constructor() {
    this.reasoningSummary = h("summary", {});
    this.reasoningBody = h("div", { class: "reasoning-body" });
    this.reasoning = h("details", { class: "reasoning", hidden: true }, this.reasoningSummary, this.reasoningBody);
    // Once the reader opens or closes the block themselves, streaming stops doing it for them.
    this.reasoningSummary.addEventListener("click", () => (this.userToggled = true));
    this.content = h("div", { class: "content" });
    this.tools = h("div", { class: "tool-calls" });
    this.metrics = h("div", { class: "metrics" });
    this.actions = h("div", { class: "actions" });
    this.element = h("article", { class: "msg assistant", "aria-label": "Assistant" }, this.reasoning, this.content, this.tools, this.metrics, this.actions);
  }

  update(turn: AssistantTurn): void {
    this.element.classList.toggle("streaming", turn.streaming);
    this.reasoning.hidden = turn.reasoning === "";
    if (!this.userToggled) this.reasoning.open = turn.streaming && turn.content === "" && turn.toolCalls.length === 0;
    this.reasoningSummary.textContent = turn.streaming && turn.content === "" ? "Thinking…" : `Reasoning (${wordCount(turn.reasoning)} words)`;
    this.reasoningBody.textContent = turn.reasoning.trim();
    this.content.innerHTML = renderMarkdown(turn.content);
    replace(this.tools, ...turn.toolCalls.map((call) => toolCard(call, turn.results.get(call.id))));
    replace(this.metrics, turn.metrics ? metricsLine(turn.metrics) : null);
  }

  /** Buttons under the reply (regenerate). */
  setActions(...buttons: HTMLElement[]): void {
    replace(this.actions, ...buttons);
  }
}

function toolCard(call: ToolCall, result: string | undefined): HTMLElement {
  return h(
    "div",
    { class: "tool-card", dataset: { tool: call.function.name } },
    h("div", { class: "tool-call" }, h("span", { class: "badge" }, "call"), h("code", {}, call.function.name)),
    h("div", { class: "tool-args" }, h("span", { class: "badge" }, "arguments"), h("pre", {}, prettyJson(call.function.arguments))),
    h(
      "div",
      { class: "tool-result" },
      h("span", { class: "badge" }, "result"),
      result === undefined ? h("em", {}, "running…") : h("pre", {}, prettyJson(result)),
    ),
  );
}

function metricsLine(m: ReplyMetrics): HTMLElement {
  const parts: string[] = [];
  if (m.ttftMs !== null) parts.push(`TTFT ${Math.round(m.ttftMs)} ms`);
  if (m.tokensPerS !== null) parts.push(`${m.tokensPerS.toFixed(1)} tok/s`);
  if (m.completionTokens !== null) parts.push(`${m.completionTokens} tokens`);
  if (m.promptTokens !== null) parts.push(`prompt ${m.promptTokens} (${m.cachedTokens ?? 0} cached)`);
  parts.push(`finish: ${m.finish}`);
  return h("small", {}, parts.join(" · "));
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;
