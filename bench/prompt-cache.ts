/**
 * Prompt-cache traces (issue 19): a chat app's traffic on the scripted engine,
 * which simulates the prompt-cache policy on its own tokens, through the
 * unchanged openai SDK v6 on `client.fetch`. Each trace starts from a fresh
 * client (a cold cache); every request reports cached / prompt tokens.
 *
 * - chat app: a ~1 200-token system prompt with six tools; chats A1, B1, A2,
 *   B2, regenerate A2, edit A2, a new chat C1, and a Responses request with
 *   the same instructions and tools;
 * - two long chats (prompts growing past ~1 950 tokens) interleaved, on a
 *   model without reasoning (see PLAIN_MODEL);
 * - a 10-step agent loop (a reasoning model calling tools), reasoning kept —
 *   with the SDK's `.stream()` helper at two steps, which keeps only the last
 *   reasoning fragment — and reasoning dropped.
 *
 * Runs in Node (bench/run.mjs loads it through Vite) and from the unit test
 * that holds the goals (test/unit/prompt-cache-trace.test.ts).
 */
import OpenAI from "openai";
import { createClient } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";
import type { EngineRequest } from "../src/engine/types.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
/**
 * The long chats use a model without reasoning: Qwen3's template drops an
 * earlier turn's reasoning from the history, so the tokens after a reply's
 * start differ from what the cache holds (on any server), and a long reply
 * is prefilled again at the next turn.
 */
const PLAIN_MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

export interface TraceRequest {
  trace: string;
  step: string;
  prompt: number;
  cached: number;
  /** A chat's first request with nothing to share (a trace's first; each long chat's first): outside the goal. */
  cold: boolean;
}

export interface TraceSummary {
  trace: string;
  requests: number;
  prompt: number;
  cached: number;
  /** Cached share of the prompt tokens of the requests that are not cold. */
  ratioAfterFirst: number;
  /** The lowest cached share of one request that is not cold. */
  minAfterFirst: number;
}

const words = (seed: string, n: number) => Array.from({ length: n }, (_, i) => `${seed}${i % 53}`).join(" ");
const SYSTEM = `You are the booking assistant of a travel agency. ${words("rule", 1000)}`;
const param = (name: string) => ({ type: "object", properties: { [name]: { type: "string", description: `The ${name} to use.` } }, required: [name] });
const TOOL_NAMES = ["search_flights", "book_flight", "search_hotels", "book_hotel", "get_weather", "cancel_booking"];
const CHAT_TOOLS = TOOL_NAMES.map((name, i) => ({ type: "function" as const, function: { name, description: `${name.replace("_", " ")}: ${words("desc", 12 + i)}`, parameters: param(`field${i}`) } }));
const RESPONSES_TOOLS = CHAT_TOOLS.map((t) => ({ type: "function" as const, name: t.function.name, description: t.function.description, parameters: t.function.parameters, strict: false }));

const lastText = (r: EngineRequest) => {
  const c = r.messages[r.messages.length - 1].content;
  return typeof c === "string" ? c : "";
};

/** `promptCache: false` in the bench's comparison run: web-llm's own reuse only. */
let promptCache: false | undefined;

function setup(reply: (r: EngineRequest) => string) {
  const engine = createScriptedEngine({ replies: reply, promptCache });
  const client = createClient({ worker: false, engine });
  const openai = new OpenAI({ baseURL: "http://local.webgpu/v1", apiKey: "local", fetch: client.fetch as typeof fetch });
  return { openai };
}

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Completion = OpenAI.Chat.Completions.ChatCompletion;

function recorder(trace: string, out: TraceRequest[]) {
  let first = true;
  return (step: string, usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } | null } | undefined, cold = first) => {
    first = false;
    out.push({ trace, step, prompt: usage?.prompt_tokens ?? 0, cached: usage?.prompt_tokens_details?.cached_tokens ?? 0, cold });
  };
}

async function chatApp(out: TraceRequest[]): Promise<void> {
  const { openai } = setup((r) => `<think>The user asks: ${lastText(r).slice(0, 40)}</think>Here is what I found. ${words("ans", 40)}`);
  const record = recorder("chat app", out);
  const sys: Msg = { role: "system", content: SYSTEM };
  const ask = async (step: string, messages: Msg[]) => {
    const c = await openai.chat.completions.create({ model: MODEL, messages, tools: CHAT_TOOLS });
    record(step, c.usage);
    return c;
  };
  const back = (c: Completion) => c.choices[0].message as Msg;
  const a1m: Msg[] = [sys, { role: "user", content: "Flights to Lisbon in May?" }];
  const a1 = await ask("A1", a1m);
  const b1m: Msg[] = [sys, { role: "user", content: "A hotel in Oslo for two nights." }];
  const b1 = await ask("B1 (other chat)", b1m);
  const a2m: Msg[] = [...a1m, back(a1), { role: "user", content: "The cheapest one, please." }];
  await ask("A2 (back to A)", a2m);
  await ask("B2", [...b1m, back(b1), { role: "user", content: "Near the station." }]);
  await ask("regenerate A2", a2m);
  await ask("edit A2", [...a1m, back(a1), { role: "user", content: "The fastest one, please." }]);
  await ask("C1 (new chat)", [sys, { role: "user", content: "What is the weather in Rome?" }]);
  const response = await openai.responses.create({ model: MODEL, instructions: SYSTEM, tools: RESPONSES_TOOLS, input: "Cancel my Oslo booking." });
  record("Responses, same instructions + tools", { prompt_tokens: response.usage?.input_tokens ?? 0, prompt_tokens_details: response.usage?.input_tokens_details });
}

async function interleaved(out: TraceRequest[]): Promise<void> {
  const { openai } = setup((r) => words(`r${r.messages.length}x`, 120));
  const record = recorder("two long chats interleaved", out);
  const chats: Msg[][] = [
    [{ role: "system", content: "You summarize documents." }, { role: "user", content: `Document A: ${words("alpha", 1400)}` }],
    [{ role: "system", content: "You summarize documents." }, { role: "user", content: `Document B: ${words("beta", 1400)}` }],
  ];
  for (let turn = 1; turn <= 4; turn++) {
    for (const [i, name] of ["A", "B"].entries()) {
      const c = await openai.chat.completions.create({ model: PLAIN_MODEL, messages: chats[i] });
      record(`${name}${turn}`, c.usage, turn === 1);
      chats[i] = [...chats[i], c.choices[0].message as Msg, { role: "user", content: `Question ${turn}: ${words(`q${turn}${name}`, 60)}` }];
    }
  }
}

async function agentLoop(out: TraceRequest[], reasoning: "kept" | "dropped"): Promise<void> {
  const step = (r: EngineRequest) => r.messages.filter((m) => m.role === "tool" || (typeof m.content === "string" && m.content.includes("<tool_response>"))).length;
  const { openai } = setup((r) => {
    const n = step(r);
    return n >= 9
      ? `<think>All ten results are in.</think>Done: ${words("sum", 30)}`
      : `<think>Step ${n}: I still need ${words("need", 15)}</think>\n\n<tool_call>\n{"name": "${TOOL_NAMES[n % 6]}", "arguments": {"field${n % 6}": "item ${n}"}}\n</tool_call>`;
  });
  const record = recorder(`agent loop, reasoning ${reasoning}`, out);
  const messages: Msg[] = [{ role: "system", content: SYSTEM }, { role: "user", content: "Plan my whole trip to Lisbon." }];
  for (let i = 0; i < 10; i++) {
    // Reasoning kept: two steps use the SDK's stream helper, whose message keeps only the last reasoning fragment.
    const helper = reasoning === "kept" && (i === 3 || i === 7);
    const c = helper
      ? await openai.chat.completions.stream({ model: MODEL, messages, tools: CHAT_TOOLS, stream_options: { include_usage: true } }).finalChatCompletion()
      : await openai.chat.completions.create({ model: MODEL, messages, tools: CHAT_TOOLS });
    record(`step ${i + 1}${helper ? " (stream helper)" : ""}`, c.usage);
    const message = { ...c.choices[0].message } as Msg & { reasoning_content?: string };
    if (reasoning === "dropped") delete message.reasoning_content;
    messages.push(message);
    for (const call of c.choices[0].message.tool_calls ?? []) messages.push({ role: "tool", tool_call_id: call.id, content: `Result of ${call.type === "function" ? call.function.name : "call"}: ${words("res", 20)}` });
    if (!c.choices[0].message.tool_calls?.length) break;
  }
}

export function summarize(requests: TraceRequest[]): TraceSummary[] {
  const traces = [...new Set(requests.map((r) => r.trace))];
  return traces.map((trace) => {
    const rows = requests.filter((r) => r.trace === trace);
    const after = rows.filter((r) => !r.cold);
    const prompt = after.reduce((n, r) => n + r.prompt, 0);
    const cached = after.reduce((n, r) => n + r.cached, 0);
    return { trace, requests: rows.length, prompt, cached, ratioAfterFirst: prompt ? cached / prompt : 0, minAfterFirst: Math.min(...after.map((r) => (r.prompt ? r.cached / r.prompt : 0))) };
  });
}

/** The traces; `{ promptCache: false }` runs them with caching off (web-llm's own reuse), for comparison. */
export async function benchPromptCache(options: { promptCache?: false } = {}): Promise<{ requests: TraceRequest[]; summary: TraceSummary[] }> {
  promptCache = options.promptCache;
  const requests: TraceRequest[] = [];
  await chatApp(requests);
  await interleaved(requests);
  await agentLoop(requests, "kept");
  await agentLoop(requests, "dropped");
  return { requests, summary: summarize(requests) };
}
