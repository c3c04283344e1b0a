/**
 * The message shaping every family shares: where the tool text goes, how an
 * assistant turn of the history is written back (raw text when the host has
 * it), consecutive tool results merged into one turn, web-llm's ordering
 * rules (system first only, last message user/tool unless continuing). What
 * differs per family is its PromptStyle.
 */
import type { EngineMessage, EnginePart } from "../engine/types.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { ContentPart, FunctionTool, ToolCall } from "../protocol/types.js";
import type { Family, PromptContext, ReasoningShape } from "./types.js";

/** One tool message, with the call it answers when the history has it. */
export interface ToolResult {
  content: string;
  callId: string | null;
  /** The function name: the answered call's, else the message's `name`, else "". */
  name: string;
  call: ToolCall | undefined;
}

/** How a family writes tools, calls, results and its system turn. */
export interface PromptStyle {
  /** The tool definitions in the official template's wording. */
  toolBlock(tools: FunctionTool[], context: PromptContext): string;
  /** `system`: the block goes into the system text; `first-user`: before the first user message's text. */
  toolPlacement: "system" | "first-user";
  /**
   * The system text from the app's system text and the tool block (either may
   * be absent). Undefined: no system turn (web-llm's template default applies).
   */
  system(appSystem: string | undefined, toolBlock: string | undefined, context: PromptContext): string | undefined;
  /** An assistant turn written from its visible content and calls. */
  assistant(content: string, calls: ToolCall[]): string;
  /** A run of consecutive tool messages as ONE turn. */
  results(results: ToolResult[]): EngineMessage;
  /**
   * Reasoning of earlier turns, as the official template treats it:
   * `keep` it, `drop` it, or drop it only before the last user query (Qwen3).
   */
  historyReasoning: "keep" | "drop" | "drop-before-last-user";
  /** The template keeps the whitespace that follows a dropped reasoning block (DeepSeek-R1 does). */
  keepGapAfterReasoning?: boolean;
  /** Between text put before the first user message and that message (default a blank line). */
  userPrefixSeparator?: string;
}

const textOf = (m: NormalizedMessage): string =>
  typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("");

/**
 * A user message's content handed on as engine parts. The host prepares every
 * audio part (host/audio-input.ts: WAV measured, other containers decoded)
 * before the prompt is shaped; an unprepared one is caught here instead of
 * reaching an engine.
 */
function enginePartsOf(content: string | ContentPart[]): string | EnginePart[] {
  if (typeof content === "string") return content;
  for (const part of content) {
    if (part.type === "input_audio" && !("audio" in part)) throw new Error("An audio part reached prompt shaping undecoded: host/audio-input.ts must prepare it first.");
  }
  return content as EnginePart[];
}

/** Joins non-empty parts with `separator`. */
export function joinParts(separator: string, ...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== "").join(separator);
}

/** `raw` without its reasoning block (and, with `trim`, the whitespace after it). */
export function withoutReasoning(raw: string, reasoning: ReasoningShape, trim = true): string {
  const close = raw.indexOf(reasoning.close);
  if (close < 0) return raw;
  const open = raw.lastIndexOf(reasoning.open, close);
  // Prompt-opened blocks have no opener in the output: everything before the close is reasoning.
  const start = open < 0 ? (reasoning.promptOpened ? 0 : -1) : open;
  if (start < 0) return raw;
  const rest = raw.slice(close + reasoning.close.length);
  const text = raw.slice(0, start) + (trim ? rest.replace(/^\s+/, "") : rest);
  return trim ? text.replace(/^\s+/, "") : text;
}

export function shapeMessages(messages: NormalizedMessage[], context: PromptContext, style: PromptStyle, family: Family): EngineMessage[] {
  const out: EngineMessage[] = [];
  const block = context.tools.length > 0 ? style.toolBlock(context.tools, context) : undefined;
  let start = 0;
  let appSystem: string | undefined;
  if (messages[0]?.role === "system") {
    appSystem = textOf(messages[0]);
    start = 1;
  }
  const system = style.system(appSystem, style.toolPlacement === "system" ? block : undefined, context);
  // Text that must precede the first user message: the system text of models without a system turn, and/or the tool block.
  let prefix: string | undefined;
  if (system !== undefined) {
    if (family.capabilities.systemRole) out.push({ role: "system", content: system });
    else prefix = system;
  }
  if (style.toolPlacement === "first-user" && block !== undefined) prefix = joinParts("\n\n", prefix, block);

  const calls = new Map<string, ToolCall>();
  for (const m of messages) for (const c of m.toolCalls) calls.set(c.id, c);
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const continuing = messages.length > 0 && messages[messages.length - 1].role === "assistant";

  const pushUser = (content: EngineMessage["content"]): void => {
    if (prefix !== undefined) {
      const join = (text: string) => joinParts(style.userPrefixSeparator ?? "\n\n", prefix, text);
      if (typeof content === "string") content = join(content);
      else {
        // web-llm takes at most one text part: the prefix joins it rather than adding one.
        const at = content.findIndex((p) => p.type === "text");
        content = at < 0 ? [{ type: "text", text: prefix }, ...content] : content.map((p, i) => (i === at && p.type === "text" ? { ...p, text: join(p.text) } : p));
      }
      prefix = undefined;
    }
    out.push({ role: "user", content });
  };

  for (let i = start; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "user") {
      pushUser(enginePartsOf(m.content));
    } else if (m.role === "system") {
      // web-llm takes a system message only first: a later one becomes a user turn.
      pushUser(textOf(m));
    } else if (m.role === "assistant") {
      if (continuing && i === messages.length - 1) {
        // Continuation: the model goes on from exactly this text.
        out.push({ role: "assistant", content: textOf(m) });
        continue;
      }
      out.push({ role: "assistant", content: assistantText(m, i < lastUser, context, style, family) });
    } else {
      const run: ToolResult[] = [];
      for (; i < messages.length && messages[i].role === "tool"; i++) {
        const t = messages[i];
        const call = t.toolCallId !== null ? calls.get(t.toolCallId) : undefined;
        run.push({ content: textOf(t), callId: t.toolCallId, name: call?.function.name ?? t.name ?? "", call });
      }
      i--;
      out.push(style.results(run));
    }
  }
  // Only system text and no user message at all (web-llm needs one): the prefix becomes the user turn.
  if (prefix !== undefined) out.push({ role: "user", content: prefix });
  return out;
}

/**
 * An earlier assistant turn. The raw text the model produced is used verbatim
 * (web-llm then reuses its KV cache) except that reasoning the official
 * template drops is cut from it; without raw text the turn is written from its
 * content and calls in the family's format.
 */
function assistantText(m: NormalizedMessage, beforeLastUser: boolean, context: PromptContext, style: PromptStyle, family: Family): string {
  const raw = context.rawAssistantText(m);
  if (raw === undefined) return style.assistant(textOf(m), m.toolCalls);
  const drop = style.historyReasoning === "drop" || (style.historyReasoning === "drop-before-last-user" && beforeLastUser);
  // The empty block web-llm writes when thinking is off carries no reasoning: it stays, so the turn matches web-llm's stored reply (KV reuse).
  const offPrefill = family.reasoning?.offPrefill;
  if (offPrefill !== undefined && raw.startsWith(offPrefill)) return raw;
  return drop && family.reasoning ? withoutReasoning(raw, family.reasoning, !style.keepGapAfterReasoning) : raw;
}
