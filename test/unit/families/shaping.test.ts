/** How each family shapes a conversation for web-llm: tool turns, ids, tool_choice none, continuation, history, thinking switches. */
import { describe, expect, it } from "vitest";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";
import { familyOf } from "../../../src/families/registry.js";
import { call, context, normalize, shape, TOOLS, type Msg } from "./helpers.js";
import { scriptedClient, user } from "../support/client.js";

const names = Object.keys(FAMILIES) as FamilyName[];
const C1 = call("call_aaaaaaaaaaaaaaaaaaaaaaaa", "get_weather", { location: "Paris" });
const C2 = call("call_bbbbbbbbbbbbbbbbbbbbbbbb", "get_time", { timezone: "Europe/Paris" });
const toolLoop: Msg[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Weather and time?" },
  { role: "assistant", content: null, tool_calls: [C1, C2] },
  { role: "tool", tool_call_id: C1.id, content: "sunny" },
  { role: "tool", tool_call_id: C2.id, content: "noon" },
];

describe.each(names)("%s shaping", (family) => {
  it("merges consecutive tool messages into one turn and ends with a user or tool turn", () => {
    const { shaped } = shape(family, toolLoop);
    const last = shaped[shaped.length - 1];
    expect(["user", "tool"]).toContain(last.role);
    expect(shaped.filter((m) => m.role === "tool" || (m.role === "user" && (m.content as string).includes("sunny")))).toHaveLength(1);
    expect(last.content).toContain("sunny");
    expect(last.content).toContain("noon");
    expect((last.content as string).indexOf("sunny")).toBeLessThan((last.content as string).indexOf("noon"));
  });

  it("writes the assistant's calls back as call text naming each function", () => {
    const { shaped } = shape(family, toolLoop);
    const assistant = shaped.find((m) => m.role === "assistant")!;
    expect(assistant.content).toContain("get_weather");
    expect(family === "llama-3.1" || (assistant.content as string).includes("get_time")).toBe(true);
  });

  it("keeps system first only: a later system message becomes a user turn", () => {
    const { shaped } = shape(family, [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "system", content: "Now be formal." }, { role: "user", content: "ok" }], { tools: [] });
    expect(shaped.slice(1).some((m) => m.role === "system")).toBe(false);
    expect(shaped.some((m) => m.role === "user" && m.content === "Now be formal.")).toBe(true);
  });

  it("tool_choice none (no tools in the context): no tool text, and no system turn the app did not ask for", () => {
    const { shaped } = shape(family, [{ role: "user", content: "hi" }], { tools: [], toolChoice: "none" });
    const text = shaped.map((m) => m.content as string).join("\n");
    expect(text).not.toContain("get_weather");
    if (family === "ministral-3" || family === "ministral-3-reasoning") return; // their system block is always written (default system prompt)
    expect(shaped).toEqual([{ role: "user", content: "hi" }]);
  });

  it("continuation: the final assistant message is passed on exactly as sent", () => {
    const partial = "The weather in Paris is";
    const { shaped } = shape(family, [{ role: "user", content: "Weather?" }, { role: "assistant", content: partial }], { raw: () => "something else" });
    expect(shaped[shaped.length - 1]).toEqual({ role: "assistant", content: partial });
  });

  it("restores the raw text of an earlier reply verbatim (web-llm reuses its KV cache)", () => {
    const raw = FAMILIES[family].reasoning ? "" : "Raw <b>reply</b> text";
    if (!raw) return;
    const { shaped } = shape(family, [{ role: "user", content: "hi" }, { role: "assistant", content: "reply text" }, { role: "user", content: "more" }], { tools: [], raw: (m) => (m.role === "assistant" ? raw : undefined) });
    expect(shaped.find((m) => m.role === "assistant")!.content).toBe(raw);
  });

  it("ids: call_ plus 24 alphanumerics, or 9 alphanumerics for Mistral families", () => {
    const id = FAMILIES[family].newToolCallId();
    if (family.startsWith("mistral") || family.startsWith("ministral")) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    else expect(id).toMatch(/^call_[a-zA-Z0-9]{24}$/);
    expect(FAMILIES[family].newToolCallId()).not.toBe(id);
  });

  it("a conv_config tool role lists every role (web-llm replaces roles wholesale)", () => {
    const config = FAMILIES[family].convConfig;
    const { shaped } = shape(family, toolLoop);
    if (shaped.some((m) => m.role === "tool") && !family.startsWith("ministral")) {
      expect(Object.keys((config?.roles ?? {}) as object).sort()).toEqual(["assistant", "tool", "user"]);
      expect(Object.keys((config?.role_templates ?? {}) as object).sort()).toEqual(["assistant", "tool", "user"]);
    }
  });
});

describe("family specifics", () => {
  it("Mistral: app call ids become the 9 alphanumerics the template demands, the same for a call and its result", () => {
    const { shaped } = shape("mistral-v0.3", toolLoop);
    const calls = shaped.find((m) => m.role === "assistant")!.content as string;
    const ids = [...calls.matchAll(/"id": "([^"]*)"/g)].map((m) => m[1]);
    expect(ids).toEqual(["aaaaaaaaa", "bbbbbbbbb"]);
    expect(shaped[shaped.length - 1].content).toBe('[TOOL_RESULTS]{"content": sunny, "call_id": "aaaaaaaaa"}[/TOOL_RESULTS][TOOL_RESULTS]{"content": noon, "call_id": "bbbbbbbbb"}[/TOOL_RESULTS]');
  });

  it("Ministral: one tool turn holds every result in [TOOL_RESULTS] blocks once the template wraps it", () => {
    const { shaped } = shape("ministral-3", toolLoop);
    expect(shaped[shaped.length - 1]).toEqual({ role: "tool", content: "sunny[/TOOL_RESULTS][TOOL_RESULTS]noon" });
    expect(shaped.find((m) => m.role === "assistant")!.content).toBe('[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}[TOOL_CALLS]get_time[ARGS]{"timezone": "Europe/Paris"}');
    expect(FAMILIES["ministral-3"].convConfig).toEqual({ system_template: "{system_message}", system_message: "" });
  });

  it("Ministral-3-Reasoning: its [THINK] system prompt when thinking is on, none when off; an app system prompt replaces it", () => {
    const on = shape("ministral-3-reasoning", [user("hi")], { tools: [], thinking: true }).shaped;
    expect(on[0].role).toBe("system");
    expect(on[0].content).toMatch(/^\[SYSTEM_PROMPT\]# HOW YOU SHOULD THINK AND ANSWER[\s\S]*\[THINK\][\s\S]*\[\/SYSTEM_PROMPT\]$/);
    expect(shape("ministral-3-reasoning", [user("hi")], { tools: [], thinking: false }).shaped).toEqual([{ role: "user", content: "hi" }]);
    const app = shape("ministral-3-reasoning", [{ role: "system", content: "Be terse." }, user("hi")], { tools: [], thinking: true }).shaped;
    expect(app[0].content).toBe("[SYSTEM_PROMPT]Be terse.[/SYSTEM_PROMPT]");
  });

  it("Gemma 4: <|think|> opens the system turn only when thinking is on", () => {
    expect(shape("gemma-4", [user("hi")], { tools: [], thinking: true }).shaped[0]).toEqual({ role: "system", content: "<|think|>\n" });
    expect(shape("gemma-4", [user("hi")], { tools: [], thinking: false }).shaped).toEqual([{ role: "user", content: "hi" }]);
  });

  it("gemma-2/3 (no system turn): the system text and tool block lead the first user message", () => {
    const { shaped } = shape("gemma", toolLoop);
    expect(shaped[0].role).toBe("user");
    expect(shaped[0].content).toMatch(/^Be brief\.\n\n# Tools[\s\S]*<\/tool_call>\n\nWeather and time\?$/);
  });

  it("Qwen3: earlier reasoning dropped before the last user query, kept in the running tool loop", () => {
    const messages: Msg[] = [user("one"), { role: "assistant", content: "Answer one." }, user("two"), { role: "assistant", content: null, tool_calls: [C1] }, { role: "tool", tool_call_id: C1.id, content: "sunny" }];
    const normalized = normalize(messages);
    const raws = new Map([
      [normalized[1], "<think>\nold thoughts\n</think>\n\nAnswer one."],
      [normalized[3], '<think>\nnew thoughts\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'],
    ]);
    const shaped = FAMILIES.qwen3.shapeMessages(normalized, context({ raw: raws }));
    expect(shaped[1].content).toBe("Answer one.");
    expect(shaped[3].content).toBe(raws.get(normalized[3]));
  });

  it("Qwen3.5: the prompt-opened block has no opener in the raw text; it is still dropped before the last query", () => {
    const messages = normalize([user("one"), { role: "assistant", content: "Answer one." }, user("two")]);
    const shaped = FAMILIES["qwen3.5"].shapeMessages(messages, context({ raw: new Map([[messages[1], "old thoughts\n</think>\n\nAnswer one."]]) }));
    expect(shaped[1].content).toBe("Answer one.");
  });

  it("DeepSeek-R1: reasoning dropped from every earlier turn, as its template does", () => {
    const messages = normalize([user("one"), { role: "assistant", content: "A." }, user("two"), { role: "assistant", content: "B." }, user("three")]);
    const shaped = FAMILIES["deepseek-r1"].shapeMessages(messages, context({ raw: (m) => (m.role === "assistant" ? `<think>\nhmm\n</think>\n\n${m.content as string}` : undefined) }));
    expect(shaped.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["\n\nA.", "\n\nB."]);
  });

  it("Llama-3.1: tools in the first user message, system told about ipython", () => {
    const { shaped } = shape("llama-3.1", toolLoop);
    expect(shaped[0].content).toBe("Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.");
    expect(shaped[1].content).toMatch(/^Given the following functions[\s\S]*\n\nWeather and time\?$/);
    expect(shaped[shaped.length - 1]).toEqual({ role: "tool", content: '"sunny"\n"noon"' });
  });
});

describe("through the client (scripted engine)", () => {
  it("the engine receives the family-shaped prompt, tool_choice none leaves tools out, required sends a structural tag", async () => {
    const { client, engine } = scriptedClient(["ok", "ok", "ok"]);
    const tools = TOOLS;
    await client.chat.completions.create({ model: "Qwen3-0.6B-q4f16_1-MLC", messages: [user("Weather?")], tools });
    expect(engine.requests[0].messages[0].role).toBe("system");
    expect(engine.requests[0].messages[0].content).toContain("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"");
    expect(engine.requests[0].responseFormat?.type).toBe("structural_tag");

    await client.chat.completions.create({ model: "Qwen3-0.6B-q4f16_1-MLC", messages: [user("Weather?")], tools, tool_choice: "none" });
    expect(engine.requests[1].messages).toEqual([{ role: "user", content: "Weather?" }]);
    expect(engine.requests[1].responseFormat).toBeUndefined();

    await client.chat.completions.create({ model: "Llama-3.2-1B-Instruct-q4f16_1-MLC", messages: [user("Weather?")], tools, tool_choice: "required" });
    const format = engine.requests[2].responseFormat as unknown as { structural_tag: { format: { at_least_one: boolean } } };
    expect(format.structural_tag.format.at_least_one).toBe(true);
    expect(familyOf({ model_id: "Llama-3.2-1B-Instruct-q4f16_1-MLC" }).name).toBe("llama-3.1");
  });
});

describe("images", () => {
  it("text put before the first user message joins its one text part (web-llm rejects two)", () => {
    const messages = normalize([{ role: "user", content: null }]);
    messages[0].content = [
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "text", text: "What is this?" },
    ];
    const shaped = FAMILIES.gemma.shapeMessages(normalize([{ role: "system", content: "Be brief." }]).concat(messages), context());
    expect(shaped).toEqual([{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "text", text: "Be brief.\n\nWhat is this?" }] }]);
  });
});
