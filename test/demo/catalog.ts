/**
 * The catalog the demo test loads with `?catalog=`: scripted models (no
 * download, no GPU) whose raw output is Qwen3's, so the page shows what the
 * library parses out of it, plus a generated model on the artifact server for
 * the real downloader.
 */
import type { ModelRecord } from "../../src/models/record.js";

/** Reasoning, then a Hermes tool call: what Qwen3 emits when it decides to use a tool. */
export const TOOL_TURN = '<think>\nThe user asks for 2+2. I should use the calculator tool rather than guess.\n</think>\n\n<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+2"}}\n</tool_call>';
/** The answer after the tool result came back. */
export const ANSWER_TURN = "<think>\nThe calculator returned 4.\n</think>\n\nThe answer is **4**. You can check it in JavaScript:\n\n```js\nconsole.log(2 + 2); // 4\n```";
/** What the drop-in view gets through the OpenAI SDK. */
export const HELLO_TURN = "Hello from the unchanged OpenAI SDK.";
/** Long enough to stop half-way. */
export const LONG_TURN = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");

export const scriptedRecord = (alias: string, replies: string[], tokenDelayMs: number): ModelRecord => ({
  model: `https://models.invalid/${alias}-MLC`,
  model_id: `${alias}-q4f32_1-MLC`,
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  overrides: { context_window_size: 8192 },
  engine: { kind: "scripted", replies, tokenDelayMs },
});

/** What the Documents view's chat model answers (Qwen3 format: the reasoning is split off). */
export const DOCS_TURN = "<think>\nPassage [1] says how long the warranty lasts.\n</think>\n\nThe warranty lasts **two years** from the date of purchase [1].";

/** A scripted embedding model: hashed bag-of-words vectors, 4 inputs per batch, a little time per batch. */
export const DEMO_EMBEDDER: ModelRecord = {
  model: "https://models.invalid/Demo-Embed-MLC",
  model_id: "Demo-Embed-MLC-b4",
  model_lib: "https://models.invalid/none.wasm",
  model_type: 1,
  vram_required_MB: 0,
  embedding_dimensions: 256,
  engine: { kind: "scripted", replies: [], embedDelayMs: 40 },
};

export function demoCatalog(generated: ModelRecord): ModelRecord[] {
  return [
    scriptedRecord("Qwen3-Demo-Docs", [DOCS_TURN], 10),
    DEMO_EMBEDDER,
    scriptedRecord("Qwen3-Demo-Tools", [TOOL_TURN, ANSWER_TURN], 15),
    scriptedRecord("Qwen3-Demo-Long", [LONG_TURN], 40),
    scriptedRecord("Qwen3-Demo-Hello", [HELLO_TURN], 5),
    { ...generated, vram_required_MB: 1 },
  ];
}
