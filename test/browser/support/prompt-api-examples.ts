/**
 * The Prompt API explainer's own examples (webmachinelearning/prompt-api
 * README), as written there, run on whatever `globalThis.LanguageModel` is:
 * in a window (prompt-api-window.test.ts) and in a worker
 * (prompt-api-worker.ts). `Tiny` is a LanguageModel on a model with a small
 * context window, for the overflow example. What each example produced is
 * returned for the test to check. The replies the scripted engine gives, in
 * order, are EXAMPLE_REPLIES.
 */
import type { LanguageModelClass, LanguageModelSession } from "../../../src/prompt-api/index.js";

export const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
/** A model record with a small context window (scripted engine: never downloaded). */
export const TINY = { model: "http://127.0.0.1:9/tiny/", model_id: "Qwen2.5-Tiny-q4f32_1-MLC", model_lib: "http://127.0.0.1:9/tiny.wasm", overrides: { context_window_size: 120 } };

const OVERFLOW_TURNS = 6;
export const EXAMPLE_REPLIES = [
  "🎨, 🔁", // n-shot, first clone
  "🏆, 🚀", // n-shot, second clone
  '{"rating": 4.5}', // JSON schema constraint
  "Both images show cats.", // append then prompt
  ...Array.from({ length: OVERFLOW_TURNS }, (_, i) => `Noted ${i}.`), // overflow
  "gnome.barbarian@example.com", // RegExp constraint (used once the pipeline compiles regex grammars)
];

export interface ExampleResults {
  nShot: { result1: string; result2: string; usage: number; window: number };
  schema: { rating: number };
  append: { analysis: string };
  overflow: { overflows: number; usage: number; window: number; answered: string };
  regexp: { value?: string; error?: string; message?: string };
  /** The scope's own `LanguageModel` before the polyfill, as a type name. */
  hadNative: string;
}

declare const LanguageModel: LanguageModelClass;

export async function runExplainerExamples(Tiny: LanguageModelClass): Promise<Omit<ExampleResults, "hadNative">> {
  // ── N-shot prompting (with clone) ──
  const session = await LanguageModel.create({
    initialPrompts: [
      { role: "system", content: "Predict up to 5 emojis as a response to a comment. Output emojis, comma-separated." },
      { role: "user", content: "This is amazing!" },
      { role: "assistant", content: "❤️, ➕" },
      { role: "user", content: "LGTM" },
      { role: "assistant", content: "👍, 🚢" },
    ],
  });
  // Clone an existing session for efficiency, instead of recreating one each time.
  async function predictEmoji(comment: string) {
    const freshSession = await session.clone();
    return await freshSession.prompt(comment);
  }
  const result1 = await predictEmoji("Back to the drawing board");
  const result2 = await predictEmoji("This code is so good you should get promoted");

  // ── Structured output with JSON schema ──
  const schema = { type: "object", required: ["rating"], additionalProperties: false, properties: { rating: { type: "number", minimum: 0, maximum: 5 } } };
  const ratingSession = await LanguageModel.create();
  const result = await ratingSession.prompt("Summarize this feedback into a rating between 0-5: " + "The food was delicious, service was excellent, will recommend.", { responseConstraint: schema });
  const { rating } = JSON.parse(result);

  // ── Appending messages without prompting for a response ──
  const analyst = await LanguageModel.create({ initialPrompts: [{ role: "system", content: "You are a skilled analyst who correlates patterns across multiple notes." }] });
  await analyst.append([{ role: "user", content: [{ type: "text", value: "Here's one note. Notes: a cat on a mat" }] }]);
  await analyst.append([{ role: "user", content: [{ type: "text", value: "Here's another note. Notes: a cat in a hat" }] }]);
  const analysis = await analyst.prompt("What do they have in common?");

  // ── Tokenization, context window length limits, and overflow ──
  const small: LanguageModelSession = await Tiny.create({ initialPrompts: [{ role: "system", content: "Keep short notes." }] });
  let overflows = 0;
  small.addEventListener("contextoverflow", () => {
    overflows++; // "We've gone past the context window, and some inputs will be dropped!"
  });
  let answered = "";
  for (let i = 0; i < OVERFLOW_TURNS; i++) answered = await small.prompt(`Note ${i}: ${"remember this detail ".repeat(4)}`);
  const overflow = { overflows, usage: small.contextUsage, window: small.contextWindow, answered };

  // ── Structured output with a RegExp ──
  const emailRegExp = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
  const characterName = "a gnome barbarian";
  const regexp = await ratingSession.prompt(`Create a fictional email address for ${characterName}.`, { responseConstraint: emailRegExp }).then(
    (value) => ({ value }),
    (error: DOMException) => ({ error: error.name, message: error.message }),
  );

  return { nShot: { result1, result2, usage: session.contextUsage, window: session.contextWindow }, schema: { rating }, append: { analysis }, overflow, regexp };
}
