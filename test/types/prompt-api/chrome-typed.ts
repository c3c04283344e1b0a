/// <reference types="dom-chromium-ai" />
/**
 * App code typed with `@types/dom-chromium-ai` (Chrome's Prompt API types)
 * against `webgpu-openai/prompt-api`: our class stands where Chrome's
 * `LanguageModel` is expected, and option objects typed for Chrome's go into
 * ours. Compiled by test/unit/prompt-api-types.test.ts with strict tsc.
 */
import { createPromptApi, installPromptApi } from "../../../src/prompt-api/index.js";

// Code written for Chrome's API, given our class.
async function emojiApp(LM: typeof LanguageModel, signal: AbortSignal): Promise<string> {
  const options: LanguageModelCreateOptions = {
    initialPrompts: [
      { role: "system", content: "Predict up to 5 emojis as a response to a comment." },
      { role: "user", content: "This is amazing!" },
      { role: "assistant", content: "❤️, ➕" },
    ],
    expectedInputs: [{ type: "text", languages: ["en"] }, { type: "image" }],
    expectedOutputs: [{ type: "text", languages: ["en"] }],
    tools: [{ name: "lookup", description: "Look a word up.", inputSchema: { type: "object" }, execute: async (args: { word: string }) => args.word }],
    monitor(m) {
      m.addEventListener("downloadprogress", (e) => console.log(e.loaded));
    },
    signal,
  };
  const availability: Availability = await LM.availability({ expectedInputs: [{ type: "audio" }] });
  if (availability === "unavailable") return "";
  const params: LanguageModelParams = await LM.params();
  const session: LanguageModel = await LM.create(options);
  session.addEventListener("contextoverflow", () => console.log("overflow"));
  session.oncontextoverflow = (event) => console.log(event.type);
  const clone: LanguageModel = await session.clone({ signal });
  const rating: string = await clone.prompt("Rate it", { responseConstraint: { type: "object" }, omitResponseConstraintInput: false, signal });
  const stream: ReadableStream<string> = session.promptStreaming([
    { role: "user", content: [{ type: "text", value: "Describe" }, { type: "image", value: new Blob() }] },
    { role: "assistant", content: "It shows", prefix: true },
  ]);
  await session.append([{ role: "user", content: "more" }]);
  const usage: number = (await session.measureContextUsage("x")) + session.contextUsage + session.contextWindow + session.inputQuota + session.inputUsage;
  session.destroy();
  return `${rating}${stream.locked}${usage}${params.maxTopK}`;
}

const Ours = createPromptApi({ model: "Qwen3-0.6B" });
void emojiApp(Ours, new AbortController().signal);

// Chrome-typed option objects, passed to ours.
const chromeOptions: LanguageModelCreateOptions = { samplingMode: "most-predictable", initialPrompts: [{ role: "user", content: "hi" }] };
void Ours.create(chromeOptions).then((session) => session.prompt("hello", { responseConstraint: /\d+/ }));

const installed = installPromptApi({ model: "Qwen3-0.6B" });
const global: typeof LanguageModel = installed.LanguageModel;
void global;

// Negative control: a class missing create() is not a LanguageModel (tsc fails on an unused directive).
// @ts-expect-error create is missing
const notOne: typeof LanguageModel = { availability: Ours.availability, params: Ours.params, prototype: Ours.prototype };
void notOne;
