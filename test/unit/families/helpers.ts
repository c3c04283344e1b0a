/** Builders for family tests: OpenAI-shaped messages → NormalizedMessage, a PromptContext, shaping through a family. */
import type { NormalizedMessage } from "../../../src/protocol/validate.js";
import type { FunctionTool, ToolCall, ToolChoice } from "../../../src/protocol/types.js";
import type { PromptContext } from "../../../src/families/types.js";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";

export interface Msg {
  role: NormalizedMessage["role"];
  content?: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

export const normalize = (messages: Msg[]): NormalizedMessage[] =>
  messages.map((m) => ({ role: m.role, content: m.content ?? "", toolCalls: m.tool_calls ?? [], toolCallId: m.tool_call_id ?? null, name: m.name ?? null }));

export function context(over: Partial<PromptContext> & { raw?: Map<NormalizedMessage, string> | ((m: NormalizedMessage) => string | undefined) } = {}): PromptContext {
  const { raw, ...rest } = over;
  return {
    tools: [],
    toolChoice: "auto" as ToolChoice,
    parallelToolCalls: true,
    thinking: false,
    rawAssistantText: typeof raw === "function" ? raw : (m) => raw?.get(m),
    ...rest,
  };
}

export const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({ id, type: "function", function: { name, arguments: JSON.stringify(args) } });

export const WEATHER: FunctionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "City name" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"], description: "Temperature unit" },
      },
      required: ["location"],
    },
  },
};

export const TIME: FunctionTool = {
  type: "function",
  function: {
    name: "get_time",
    description: "Current time in a timezone",
    parameters: { type: "object", properties: { timezone: { type: "string", description: "IANA timezone" } }, required: ["timezone"] },
  },
};

export const TOOLS = [WEATHER, TIME];

export function shape(family: FamilyName, messages: Msg[], over: Parameters<typeof context>[0] = {}) {
  const normalized = normalize(messages);
  const ctx = context({ tools: TOOLS, ...over });
  return { normalized, context: ctx, shaped: FAMILIES[family].shapeMessages(normalized, ctx) };
}
