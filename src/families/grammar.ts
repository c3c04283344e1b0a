/**
 * `tool_choice` as web-llm's structural-tag grammar (web-xgrammar 0.1.27
 * formats): `required` → at least one call, a named function → only that
 * tool's tag, `auto` → triggered tags where the format has a trigger,
 * `parallel_tool_calls: false` → stop after the first call. Argument content
 * is the tool's JSON schema, so a call cannot name an undeclared tool nor
 * break its schema. A forced call must come first in the output, so when the
 * model thinks, the grammar lets its reasoning block come before it.
 */
import type { EngineResponseFormat } from "../engine/types.js";
import type { FunctionTool } from "../protocol/types.js";
import type { Family, PromptContext } from "./types.js";
import type { CustomToolSpec } from "../protocol/custom-tools.js";
import { invalidParam } from "../protocol/api-error.js";

/** A structural-tag format object (web-xgrammar `StructuralTagFormat`). */
export type TagFormat = Record<string, unknown>;

/** One `tag` of a structural tag. */
export interface TagItem {
  begin: string;
  content: TagFormat;
  end: string;
}

/** How a family's calls look to the grammar. */
export interface GrammarStyle {
  /** The tag of one call to `tool`. */
  callTag(tool: FunctionTool): TagItem;
  /**
   * Text that starts every call (a prefix of each tag's `begin`); undefined
   * when calls have no marker (then `auto` is left unconstrained).
   */
  trigger: string | undefined;
  /**
   * Calls sit in one wrapper with a separator (`[TOOL_CALLS][a, b]`): the
   * wrapper is the triggered tag and the calls are tags inside it.
   */
  wrapper?: { begin: string; end: string; separator: string };
}

/** The tool's parameters schema as xgrammar wants it (an object; none → any object). */
export function parametersSchema(tool: FunctionTool): Record<string, unknown> {
  return tool.function.parameters ?? { type: "object" };
}

export function toolGrammar(context: PromptContext, style: GrammarStyle, family: Family): EngineResponseFormat | undefined {
  const choice = context.toolChoice;
  if (choice === "none" || context.tools.length === 0) return undefined;
  const named = typeof choice === "object" ? choice.function.name : undefined;
  const tools = named === undefined ? context.tools : context.tools.filter((t) => t.function.name === named);
  if (tools.length === 0) return undefined;
  const forced = choice === "required" || named !== undefined;
  if (!forced && style.trigger === undefined) return undefined;
  const single = !context.parallelToolCalls || !family.capabilities.parallelToolCalls || named !== undefined;
  const calls = tools.map((t) => customCallTag(style.callTag(t), context.customTools?.[t.function.name], family.name));
  let tags: TagItem[] = calls;
  if (style.wrapper) {
    const inner: TagFormat = { type: "tags_with_separator", tags: calls, separator: style.wrapper.separator, at_least_one: true, stop_after_first: single };
    tags = [{ begin: style.wrapper.begin, content: inner, end: style.wrapper.end }];
  }
  const trigger = style.trigger ?? commonPrefix(tags.map((t) => t.begin));
  let format: TagFormat = { type: "triggered_tags", triggers: [trigger], tags, at_least_one: forced, stop_after_first: single };
  const reasoning = family.reasoning;
  if (forced && reasoning && context.thinking) {
    // Free text inside the reasoning block, then the call. (`auto` needs nothing: text is free before a trigger.)
    const thinking: TagItem = { begin: reasoning.promptOpened ? "" : reasoning.open, content: { type: "any_text" }, end: reasoning.close + reasoning.gap };
    format = { type: "sequence", elements: [{ type: "tag", ...thinking }, format] };
  }
  return { type: "structural_tag", structural_tag: { type: "structural_tag", format } };
}

function commonPrefix(strings: string[]): string {
  let prefix = strings[0] ?? "";
  for (const s of strings) while (!s.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}

/**
 * A custom tool's call tag with its grammar in place of the `input` string
 * schema: JSON arguments get the JSON-escaped form, Qwen3.5's XML parameter
 * the raw one. A format that writes arguments otherwise (Gemma 4's own
 * syntax, pythonic calls) has no exact form here: refused.
 */
function customCallTag(tag: TagItem, spec: CustomToolSpec | undefined, family: string): TagItem {
  if (!spec?.grammar) return tag;
  switch (tag.content.type) {
    case "json_schema":
      return { ...tag, content: { type: "grammar", grammar: spec.grammar.json } };
    case "qwen_xml_parameter":
      return { ...tag, content: { type: "grammar", grammar: spec.grammar.xmlParameter } };
    default:
      throw invalidParam("tools", `The custom tool \`${spec.name}\` has a grammar, which cannot be enforced exactly in the ${family} call format; use a model whose calls carry JSON arguments, or format {"type": "text"}.`, "unsupported_grammar");
  }
}
