/**
 * The fallback family: plain chat, no tool format and no reasoning. Tool
 * results are folded into user turns so every conversation template accepts them.
 */
import type { Family } from "./types.js";
import type { EngineMessage } from "../engine/types.js";
import type { ParseEvent } from "../parsers/types.js";
import { randomId } from "../protocol/ids.js";

export const plainFamily: Family = {
  name: "plain",
  tools: "prompted",
  reasoning: null,
  shapeMessages(messages, context) {
    return messages.map((m): EngineMessage => {
      if (m.role === "assistant") return { role: "assistant", content: context.rawAssistantText(m) ?? (m.content as string) };
      if (m.role === "tool") return { role: "user", content: `Tool result: ${m.content as string}` };
      return { role: m.role, content: m.content };
    });
  },
  toolGrammar: () => undefined,
  createParser() {
    return {
      inReasoning: false,
      push: (text: string): ParseEvent[] => (text ? [{ type: "content", text }] : []),
      finish: (): ParseEvent[] => [],
    };
  },
  newToolCallId: () => `call_${randomId(24)}`,
};
