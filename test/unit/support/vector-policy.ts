/**
 * Vectors whose expectation we do not follow, and why: each names the DESIGN
 * "Decisions" policy (or the parser contract) that applies and gives the
 * result that policy produces. Vectors not listed here are asserted exactly
 * as the fixture states them.
 */
import type { Vector } from "./vectors.js";

export interface PolicyEntry {
  /** The rule that applies, in a few words (shown in the test title). */
  rule: string;
  /** Why the vector's expectation differs (which server did what). */
  why: string;
  /** Fields of the expectation that the policy changes. */
  expected: Partial<Vector["expected"]>;
}

const BARE = "bare JSON counts only if the whole reply is calls";
const PROSE = "prose around calls is content";
const WS = "whitespace between structure and prose is not content";
const CUT = "a call the output cuts stays a call with the arguments it has";

export const POLICY: Record<string, PolicyEntry> = {
  "ministral-04-vllm-truncated-args": {
    rule: CUT,
    why:
      "vLLM emits the cut-off call with its arguments as invalid JSON. Calls stream as generated (issue 20, item 8), so " +
      "the call stays a call, as the hosted API returns a call cut by max_tokens; its arguments are closed into valid JSON " +
      "(the open string and object closed) so apps can always JSON.parse them, and finish_reason says the output was cut.",
    expected: { tool_calls: [{ name: "bash", arguments: { command: "print(\"hello world!\")\nre.compile(r'{}')" } }] },
  },
  "hermes-03-invalid-json": {
    rule: CUT,
    why:
      "vLLM re-parses the finished text and, the JSON being cut short, returns it all as content. Streaming cannot do " +
      "that: the call's name and argument fragments are already out (issue 20, item 8). The call keeps its arguments (here " +
      "complete; only the outer `}` is missing) and the host reports finish_reason stop, not tool_calls.",
    expected: { content: null, tool_calls: [{ name: "final_answer", arguments: { trigger: true } }] },
  },
  "hermes-10-unicode-after-think": {
    rule: WS,
    why:
      "vLLM keeps the newline before </think> in reasoning and the blank lines between </think> and <tool_call> as content. " +
      "We trim whitespace just inside the reasoning markers (as llama.cpp does, vector qwen35-07) and drop whitespace " +
      "between structure and prose when there is no prose on the other side, so content is empty → null beside a call.",
    expected: { content: null, reasoning_content: "好的，用户需要5MW燃气轮机参数。" },
  },
  "r1-04-leading-newline": {
    rule: WS,
    why: "vLLM keeps the newline after </think> in content; whitespace between the end of reasoning and the answer is not content for us.",
    expected: { content: "This is the rest" },
  },
  "pythonic-07-sglang-text-before": {
    rule: WS,
    why: "SGLang keeps the space before the call list; trailing whitespace before a call (with no prose after it) is dropped, as in gemma4-02.",
    expected: { content: "Here's a tool call:" },
  },
  "llama-01-surrounding-text": {
    rule: BARE,
    why:
      "vLLM llama3_json finds the object inside prose and drops the prose. DESIGN: a bare JSON call counts only when the " +
      "whole reply is such a call; with prose around it, the reply is content.",
    expected: {
      content: 'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?',
      tool_calls: [],
    },
  },
  "llama-09-sglang-trailing-text-kept": {
    rule: BARE,
    why: "SGLang parses a leading object and keeps the trailing prose. DESIGN's bare-call policy: prose after it makes the whole reply content.",
    expected: { content: '{"name": "get_weather", "parameters": {}} Some follow-up text', tool_calls: [] },
  },
  "llama-11-invalid-then-valid": {
    rule: BARE,
    why: "vLLM skips the broken object and takes the inner valid one. The whole reply is not one valid call object, so it is content.",
    expected: { content: '{"name": "get_weather", "parameters": {{"name": "get_weather", "parameters": {}}', tool_calls: [] },
  },
  "mistral-05-trailing-data": {
    rule: PROSE,
    why:
      "vLLM drops the trailing text when not streaming and keeps it when streaming. DESIGN keeps prose after calls as " +
      "content (its leading newline is whitespace next to a call, not content).",
    expected: { content: "extra trailing data" },
  },
  "phi4mini-04-vllm-functools": {
    rule: PROSE,
    why: "vLLM's phi4_mini_json strips all prose. DESIGN keeps prose before and after calls; the blank line between the two pieces of prose stays.",
    expected: { content: "Let me check the weather for you.\n\nWould you like to know more?" },
  },
  "qwen35-08-lcpp-toolcall-inside-reasoning": {
    rule: "Qwen3.5: <tool_call> inside reasoning ends the reasoning",
    why:
      "llama.cpp ends reasoning only at </think>, so the first <tool_call> stays reasoning. DESIGN takes vLLM's and " +
      "Ollama's side: <tool_call> ends the reasoning (Qwen3.5 often forgets </think>), so both blocks are calls and the " +
      "stray </think> after the first one is dropped.",
    expected: {
      content: null,
      reasoning_content: "Let's call a tool:",
      tool_calls: [
        { name: "python", arguments: { code: 'def hello():\n    print("Not the real call!")\n\nhello()' } },
        { name: "python", arguments: { code: 'def hello():\n    print("Hello, world!")\n\nhello()' } },
      ],
    },
  },
  "ministral-15-vllm-end-without-begin": {
    rule: "Ministral: reasoning needs [THINK] unless the prompt opened it",
    why:
      "Older vLLM tests treat text before a lone [/THINK] as reasoning; DESIGN follows the newer vLLM parser: without " +
      "[THINK] (and our Ministral prompt does not open it) there is no reasoning block, and the text is content as written.",
    expected: { content: "This is a reasoning section[/THINK]This is the rest", reasoning_content: null },
  },
  "r1-08-lcpp-variant-begin-token": {
    rule: "DeepSeek-R1 output starts inside reasoning: before </think> everything is reasoning",
    why:
      "llama.cpp's test runs without forced-open thinking, so the call at the very start counts. The distills were trained " +
      "on a prompt that opens <think> and often omit the opener, so we read their output as vLLM's R1 parser does (issue 15): " +
      "until </think>, call markers are reasoning text (as in r1-09).",
    expected: {
      content: null,
      reasoning_content: "<｜tool▁calls｜>function<｜tool▁sep｜>special_function\n```json\n{\"arg1\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      tool_calls: [],
    },
  },
  "qwen2-01-qwen-agent": {
    rule: "families without a native format use our prompted Hermes format",
    why:
      "Qwen2's template has no tools; Qwen-Agent teaches the ✿FUNCTION✿ protocol, but our Qwen2 family teaches the " +
      "prompted Hermes format (<tool_call>), so ✿FUNCTION✿ text is not a call.",
    expected: {
      content: '✿FUNCTION✿: get_current_weather\n✿ARGS✿: {"location": "San Francisco, CA"}',
      tool_calls: [],
    },
  },
};

/**
 * Vectors whose notes record a disagreement between servers (or a setting)
 * where our result is the vector's expectation: the DESIGN policy that makes
 * it so. Shown in the test titles.
 */
export const AGREES: Record<string, string> = {
  "hermes-22-sglang-undefined-function": "calls to undeclared tools are dropped (SGLang; vLLM and llama.cpp pass them through), cut or not",
  "hermes-02-unterminated-eos": "a complete call missing its closing tag counts (Granite's parser would reject it)",
  "gemma4-07-ollama-flush-unterminated": "a complete call missing its closing tag counts (Ollama flushes it; vLLM's Gemma 4 parser drops it)",
  "hermes-14-lcpp-fenced": "bare JSON counts when the whole reply is the call (a ```json fence around it is allowed)",
  "llama-02-semicolon-parallel": "bare JSON counts when the whole reply is calls (`;`-separated calls filling the reply)",
  "llama-12-lcpp-basic": "bare JSON counts when the whole reply is the call",
  "llama-07-arguments-key": "bare JSON counts when the whole reply is the call; `arguments` and `parameters` both accepted",
  "gemma4-11-ollama-thinking-disabled": "thinking off: a reasoning block the model writes anyway is removed (Ollama)",
  "qwen3-r-04-no-tags-thinking-enabled": "reasoning is split by the shape the prompt sets up (Qwen3.5 opens <think> when thinking is on)",
  "hermes-17-lcpp-forced-open-think-then-call": "reasoning is split by the shape the prompt sets up (prompt-opened <think>)",
  "r1-09-lcpp-forced-open-mentions-token": "markers inside unfinished reasoning are reasoning text",
  "r1-02-no-end": "DeepSeek-R1 output starts inside reasoning (vLLM's R1 parser): no </think> means all reasoning",
  "qwen35-05-missing-tool_call-wrapper": "Qwen3.5: a bare <function=…> block is a call (vLLM)",
  "mistral-06-not-json": "a control-token marker with no call after it is dropped, the rest is content",
  "pythonic-05-bad-sibling": "calls to undeclared tools are dropped (`bad` is not declared; its sibling is kept)",
  "hermes-01": "content is null beside calls when it is blank (ChoiceBuilder)",
  "ministral-12-lcpp-reasoning-format-none": "no reasoning markers configured: everything is content",
};
