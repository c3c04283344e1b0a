/**
 * The real-engine grammar run (scripts/smoke-real.mjs --steps grammar): greedy,
 * tiny prompts, a model with random weights (it follows no instruction, so
 * whatever matches was forced by the grammar):
 * 1. chat with `response_format: {type: "grammar", syntax: "regex"}`: the text
 *    must match the pattern in full;
 * 2. chat with one custom tool whose format is a Lark grammar, forced by
 *    `tool_choice`: the call's `custom.input` must be in the grammar's language
 *    (checked with the equivalent JavaScript RegExp).
 * `runGrammarSmoke` takes any client, so a unit test drives it with the
 * scripted engine (test/unit/real-smoke-grammar.test.ts); `window.smokeGrammar`
 * loads the served model through the real engine and runs it.
 */
import { createClient, type Client, type ModelRecord } from "../../src/index.js";

export interface GrammarSmokeOptions {
  modelId: string;
}

type Json = Record<string, unknown>;

/** Short enough for a few decode steps on an emulated GPU (max_tokens 12). */
export const REGEX_DEFINITION = "[0-9]{3}-[a-c]{2}";
export const REGEX_MAX_TOKENS = 12;
/** A tiny Lark grammar and the JavaScript RegExp of the same language. */
export const LARK_DEFINITION = 'start: "ls " DIR\nDIR: /[a-z]{1,4}/';
export const LARK_AS_REGEXP = /^ls [a-z]{1,4}$/;
export const TOOL_NAME = "shell";
/**
 * The Hermes call around the input is 20 tokens as the Qwen tokenizer writes it
 * (`<tool_call>\n{"name": "shell", "arguments": {"input": "ls abcd"}}\n</tool_call>`);
 * a constrained model with random weights may spell the literals in shorter pieces.
 */
export const TOOL_MAX_TOKENS = 48;

const MESSAGES = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hi" },
] as const;

declare global {
  interface Window {
    smokeGrammar(options: GrammarSmokeOptions): Promise<Json>;
    smokeGrammarReport: Json;
  }
}

const errorOf = (error: unknown): Json => {
  const e = error as { name?: string; message?: string; status?: number; code?: string; param?: string };
  return { name: e?.name, status: e?.status, code: e?.code, param: e?.param, message: String(e?.message ?? error).slice(0, 600) };
};

/** Runs both requests on `client` (model loaded or loadable), filling `report` as each ends (a timed-out run still shows the first). */
export async function runGrammarSmoke(client: Client, modelId: string, report: Json = {}, maxTokens = { regex: REGEX_MAX_TOKENS, tool: TOOL_MAX_TOKENS }): Promise<Json> {
  const wholeRegex = new RegExp(`^(?:${REGEX_DEFINITION})$`);
  let t = performance.now();
  try {
    const c = await client.chat.completions.create({
      model: modelId,
      temperature: 0,
      max_tokens: maxTokens.regex,
      messages: [...MESSAGES],
      response_format: { type: "grammar", syntax: "regex", definition: REGEX_DEFINITION },
    });
    const text = c.choices[0].message.content ?? "";
    report.regex = { definition: REGEX_DEFINITION, maxTokens: maxTokens.regex, text, finish_reason: c.choices[0].finish_reason, usage: c.usage, matches: wholeRegex.test(text), ms: Math.round(performance.now() - t) };
  } catch (error) {
    report.regex = { definition: REGEX_DEFINITION, error: errorOf(error), ms: Math.round(performance.now() - t) };
  }

  t = performance.now();
  try {
    const c = await client.chat.completions.create({
      model: modelId,
      temperature: 0,
      max_tokens: maxTokens.tool,
      messages: [...MESSAGES],
      tools: [{ type: "custom", custom: { name: TOOL_NAME, description: "Runs a shell command.", format: { type: "grammar", grammar: { syntax: "lark", definition: LARK_DEFINITION } } } }],
      tool_choice: { type: "custom", custom: { name: TOOL_NAME } },
    });
    const choice = c.choices[0];
    const calls = choice.message.tool_calls ?? [];
    const input = calls[0]?.type === "custom" ? calls[0].custom.input : undefined;
    report.customTool = {
      definition: LARK_DEFINITION,
      maxTokens: maxTokens.tool,
      content: choice.message.content,
      calls,
      input,
      finish_reason: choice.finish_reason,
      usage: c.usage,
      matches: calls.length === 1 && calls[0].type === "custom" && calls[0].custom.name === TOOL_NAME && typeof input === "string" && LARK_AS_REGEXP.test(input),
      ms: Math.round(performance.now() - t),
    };
  } catch (error) {
    report.customTool = { definition: LARK_DEFINITION, error: errorOf(error), ms: Math.round(performance.now() - t) };
  }
  return report;
}

export function defineGrammarSmoke(): void {
  window.smokeGrammar = async (options) => {
    const report: Json = { modelId: options.modelId };
    window.smokeGrammarReport = report;
    const record: ModelRecord = {
      model: `${location.origin}/model/`,
      model_id: options.modelId,
      model_lib: `${location.origin}/lib/model.wasm`,
      overrides: { context_window_size: 4096 },
      low_resource_required: true,
    };
    const client = createClient({ models: [record], cache: "indexeddb" });
    const t0 = performance.now();
    report.load = await client.models.load(options.modelId).then(() => ({ ms: Math.round(performance.now() - t0) }), (e: unknown) => ({ error: errorOf(e) }));
    if (!(report.load as Json).error) await runGrammarSmoke(client, options.modelId, report);
    client.terminate();
    return report;
  };
}
