/**
 * Builds a Family from its data (catalog.ts) and the prompt style of its
 * format (styles/): the parts every family shares live here once.
 */
import type { Family, FamilyCapabilities, ReasoningShape } from "./types.js";
import type { OutputFormat } from "../parsers/index.js";
import { createOutputParser } from "../parsers/index.js";
import { randomId } from "../protocol/ids.js";
import type { PromptStyle } from "./shape.js";
import { shapeMessages } from "./shape.js";
import type { GrammarStyle } from "./grammar.js";
import { toolGrammar } from "./grammar.js";
import { withCustomCalls } from "../parsers/custom-calls.js";

/** Everything that makes one family. */
export interface FamilySpec {
  name: string;
  tools: "native" | "prompted";
  format: OutputFormat;
  reasoning: ReasoningShape | null;
  capabilities: FamilyCapabilities;
  convConfig?: Record<string, unknown>;
  /** `mistral`: 9 alphanumerics (Mistral templates reject other ids); else `call_` + 24. */
  idStyle: "openai" | "mistral";
  prompt: PromptStyle;
  grammar: GrammarStyle;
}

export function defineFamily(spec: FamilySpec): Family {
  const family: Family = {
    name: spec.name,
    tools: spec.tools,
    format: spec.format,
    reasoning: spec.reasoning,
    capabilities: spec.capabilities,
    convConfig: spec.convConfig,
    shapeMessages: (messages, context) => shapeMessages(messages, context, spec.prompt, family),
    toolGrammar: (context) => toolGrammar(context, spec.grammar, family),
    createParser: (context) => {
      const parser = createOutputParser({
        format: spec.format,
        // Markers even when thinking is off: an empty think block may still appear and must not reach content.
        reasoning: spec.reasoning ? { open: spec.reasoning.open, close: spec.reasoning.close } : null,
        // (A family that always thinks starts inside its block even when the request asked thinking off.)
        reasoningOpen: Boolean(spec.reasoning?.promptOpened && (context.thinking || !spec.reasoning.switchable)),
        // Thinking turned off: a reasoning block the model writes anyway is dropped, not shown.
        // (A family that cannot switch thinking off keeps showing it.)
        discardReasoning: !context.thinking && spec.reasoning?.switchable === true,
        tools: context.tools,
      });
      const custom = Object.keys(context.customTools ?? {});
      return custom.length === 0 ? parser : withCustomCalls(parser, new Set(custom));
    },
    newToolCallId: spec.idStyle === "mistral" ? () => randomId(9) : () => `call_${randomId(24)}`,
  };
  return family;
}
