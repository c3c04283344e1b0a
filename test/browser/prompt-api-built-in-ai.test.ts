/**
 * `@built-in-ai/core` (the Vercel AI SDK provider written for Chrome's
 * built-in AI), unchanged, on the polyfill installed as
 * `globalThis.LanguageModel` in headless Chromium: generateText, streamText,
 * generateObject with a schema, and a tool call (the provider's own fenced
 * JSON protocol, its tool run by the AI SDK).
 */
import { afterEach, describe, expect, it } from "vitest";
import { builtInAI } from "@built-in-ai/core";
import { generateObject, generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngine } from "../../src/testing.js";
import { installPromptApi } from "../../src/prompt-api/index.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup) step();
  cleanup = [];
});

/** A scripted client in this page (so the test can read what reached the engine), installed as the page's LanguageModel. */
function install(replies: string[]): ScriptedEngine {
  const engine = createScriptedEngine({ replies });
  const client: Client = createClient({ worker: false, engine });
  const installed = installPromptApi({ client, model: MODEL, replace: true });
  cleanup.push(() => installed.uninstall());
  return engine;
}

const lastUserText = (engine: ScriptedEngine) => {
  const messages = engine.requests[engine.requests.length - 1].messages;
  const content = messages[messages.length - 1].content;
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
};

describe("@built-in-ai/core on the polyfill", () => {
  it("generateText", async () => {
    const engine = install(["Bonjour, le monde."]);
    const { text } = await generateText({ model: builtInAI(), system: "You translate to French.", prompt: "Hello, world." });
    expect(text).toBe("Bonjour, le monde.");
    expect(lastUserText(engine)).toContain("Hello, world.");
  });

  it("streamText", async () => {
    install(["One, two, three, four."]);
    const result = streamText({ model: builtInAI(), prompt: "Count to four." });
    const parts: string[] = [];
    for await (const part of result.textStream) parts.push(part);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe("One, two, three, four.");
  });

  it("generateObject with a schema (sent as the session's responseConstraint)", async () => {
    const engine = install(['{"name": "Grum", "level": 3}']);
    const { object } = await generateObject({ model: builtInAI(), schema: z.object({ name: z.string(), level: z.number() }), prompt: "A gnome barbarian." });
    expect(object).toEqual({ name: "Grum", level: 3 });
    const format = engine.requests[0].responseFormat;
    expect(format?.type).toBe("json_object");
    expect(JSON.parse((format as { schema: string }).schema).properties).toHaveProperty("level");
  });

  it("a tool call: the provider's fenced call, the tool run by the AI SDK, its result sent back, then the answer", async () => {
    const engine = install(['```tool_call\n{"name": "getWeather", "arguments": {"city": "Paris"}}\n```', "It is 21°C in Paris."]);
    const calls: string[] = [];
    const { text, steps } = await generateText({
      model: builtInAI(),
      prompt: "Weather in Paris?",
      tools: {
        getWeather: tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            calls.push(city);
            return { city, celsius: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(calls).toEqual(["Paris"]);
    expect(steps[0].toolCalls.map((c) => c.toolName)).toEqual(["getWeather"]);
    expect(text).toBe("It is 21°C in Paris.");
    const second = engine.requests[1].messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    expect(second).toContain('"celsius":21');
  });
});
