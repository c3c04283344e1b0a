/**
 * A request's response format in a form its engine takes
 * (`EngineCapabilities.responseFormats`). Validation and the families make
 * xgrammar's forms (a JSON schema, a structural tag for tool calls, or EBNF);
 * an engine that takes only EBNF (a llama.cpp engine's GBNF, say) gets the
 * same constraint compiled to EBNF here, engine-neutrally, as web-llm 0.2.79
 * does in its own adapter. What has no EBNF form is refused (400) before the
 * request generates, except a structural tag for `tool_choice: "auto"`, which
 * constrains nothing before a call starts: the request runs unconstrained and
 * the parser still reads the calls.
 */
import { ApiError } from "../protocol/api-error.js";
import type { EngineCapabilities, EngineResponseFormat } from "../engine/types.js";
import { jsonSchemaToEbnf } from "../grammar/json-schema-ebnf.js";
import { structuralTagToEbnf } from "../grammar/structural-tag-ebnf.js";
import { withGrammarParam } from "../protocol/grammar-refusal.js";

/** `param`: the request's name for its format, for the 400 (`response_format` in chat, `text.format` in Responses). */
export function responseFormatFor(format: EngineResponseFormat | undefined, capabilities: EngineCapabilities, modelId: string, param = "response_format"): EngineResponseFormat | undefined {
  if (!format || capabilities.responseFormats.includes(format.type)) return format;
  if (capabilities.responseFormats.includes("grammar")) {
    if (format.type === "structural_tag") {
      const grammar = withGrammarParam("tools", () => structuralTagToEbnf(format.structural_tag));
      return grammar === undefined ? undefined : { type: "grammar", grammar };
    }
    if (format.type === "json_object") {
      const grammar = withGrammarParam(param, () => jsonSchemaToEbnf(JSON.parse(format.schema) as Record<string, unknown>, format.schema));
      if (grammar !== undefined) return { type: "grammar", grammar };
    }
  }
  throw new ApiError({
    status: 400,
    code: "unsupported_response_format",
    param,
    message: `${modelId}'s engine cannot constrain its output with ${format.type === "json_object" ? "this JSON schema" : `a ${format.type} form`} (it takes ${capabilities.responseFormats.join(", ") || "none"}): leave out ${param}, tool_choice or custom tools' grammars, or choose another model.`,
  });
}
