/**
 * Tools with `execute`: declared to the model as chat function tools, run by
 * the session when the model calls them (several calls of one reply at once,
 * as Promise.all), their results fed back as tool messages until the model
 * answers in text.
 */
import type { ChatMessage, FunctionTool, ToolCall } from "../protocol/types.js";
import { domError } from "./errors.js";
import type { LanguageModelTool } from "./types.js";

/** A model that keeps calling tools is stopped after this many rounds. */
export const MAX_TOOL_ROUNDS = 16;

export type ToolSet = ReadonlyMap<string, LanguageModelTool>;

export function checkTools(tools: LanguageModelTool[] | undefined): ToolSet {
  const set = new Map<string, LanguageModelTool>();
  if (tools === undefined) return set;
  if (!Array.isArray(tools)) throw new TypeError("`tools` must be an array of { name, description, inputSchema, execute }.");
  for (const tool of tools) {
    if (typeof tool?.name !== "string" || tool.name === "") throw new TypeError("Every tool needs a non-empty `name`.");
    if (typeof tool.execute !== "function") throw new TypeError(`Tool "${tool.name}" needs an \`execute\` function.`);
    if (typeof tool.inputSchema !== "object" || tool.inputSchema === null) throw new TypeError(`Tool "${tool.name}" needs an \`inputSchema\` object.`);
    if (set.has(tool.name)) throw new TypeError(`Two tools are named "${tool.name}".`);
    set.set(tool.name, tool);
  }
  return set;
}

export function chatTools(tools: ToolSet): FunctionTool[] {
  return [...tools.values()].map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema as Record<string, unknown> },
  }));
}

/**
 * Runs every call of one reply concurrently; the results, in call order, as
 * tool messages. A tool's own failure rejects the prompt. An abort rejects at
 * once, without waiting for the tools: `execute` is the app's code and may
 * never return, and the session's next operation must not wait on it.
 */
export async function runToolCalls(calls: ToolCall[], tools: ToolSet, signal: AbortSignal): Promise<ChatMessage[]> {
  const running = Promise.all(
    calls.map(async (call) => {
      const tool = tools.get(call.function.name);
      if (!tool) return `Error: there is no tool named "${call.function.name}".`;
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments || "{}");
      } catch {
        return `Error: the arguments were not valid JSON: ${call.function.arguments}`;
      }
      const result: unknown = await tool.execute(args);
      return typeof result === "string" ? result : JSON.stringify(result);
    }),
  );
  const results = await untilAborted(running, signal);
  return calls.map((call, i) => ({ role: "tool", tool_call_id: call.id, content: results[i] }));
}

/** `work`'s result, or the signal's reason as soon as it aborts (`work` is left to settle on its own, its outcome ignored). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const reason = () => signal.reason ?? domError("AbortError", "The prompt was aborted.");
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(reason());
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    work.then(
      (value) => (signal.aborted ? reject(reason()) : resolve(value)),
      (error: unknown) => (signal.aborted ? reject(reason()) : reject(error)),
    ).finally(() => signal.removeEventListener("abort", abort));
  });
}
