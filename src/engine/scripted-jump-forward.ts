/**
 * The scripted engine's stand-in for xgrammar's jump-forward
 * (speculative/jump-forward.ts): the text a request's tool-call grammar
 * forces next, read from its structural tag (families/grammar.ts). The
 * scripted engine does not constrain its replies, so it does not need a
 * grammar engine; it mirrors the forced text that matters most — a call's
 * opening markup (`<tool_call>\n{"name": "set_unit", "arguments": `):
 * - a forced call (`at_least_one`) starts the output: the tags' common
 *   opening is forced from the first token;
 * - once a trigger is in the output, the opening of the one tag that agrees
 *   with what follows it (the common part, when several still do).
 * Inside a call's arguments nothing is forced here (xgrammar would force a
 * schema's keys too: the real engine drafts more than this mirror).
 */
import type { EngineResponseFormat } from "./types.js";

interface Tag {
  begin: string;
}

interface TriggeredTags {
  triggers: string[];
  tags: Tag[];
  forced: boolean;
}

/** The triggered tags of a tool-call structural tag (also after a reasoning block), or null. */
function triggeredTags(format: EngineResponseFormat | undefined): TriggeredTags | null {
  if (format?.type !== "structural_tag") return null;
  let f = (format.structural_tag as { format?: Record<string, unknown> }).format;
  // After a reasoning block the call is found by its trigger only (the output does not start with it).
  const afterReasoning = f?.type === "sequence";
  if (afterReasoning) f = ((f as Record<string, unknown>).elements as Array<Record<string, unknown>>).find((e) => e.type === "triggered_tags");
  if (f?.type !== "triggered_tags" || !Array.isArray(f.tags) || !Array.isArray(f.triggers)) return null;
  const tags = (f.tags as Array<{ begin?: unknown }>).filter((t): t is Tag => typeof t.begin === "string");
  return { triggers: (f.triggers as unknown[]).filter((t): t is string => typeof t === "string"), tags, forced: f.at_least_one === true && !afterReasoning };
}

/** The text the request's grammar forces after `output` ("" when nothing is). */
export function scriptedForcedText(format: EngineResponseFormat | undefined, output: string): string {
  const tt = triggeredTags(format);
  if (!tt || tt.tags.length === 0) return "";
  // Where the last call opening starts: after the last trigger, or (a forced call) at the start.
  let start = -1;
  for (const trigger of tt.triggers) if (trigger) start = Math.max(start, output.lastIndexOf(trigger));
  if (start < 0 && tt.forced) start = 0;
  if (start < 0) return "";
  const opened = output.slice(start);
  const rests = tt.tags.filter((t) => t.begin.startsWith(opened) && t.begin.length > opened.length).map((t) => t.begin.slice(opened.length));
  return commonPrefix(rests);
}

function commonPrefix(strings: string[]): string {
  if (strings.length === 0) return "";
  let prefix = strings[0];
  for (const s of strings) while (!s.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
