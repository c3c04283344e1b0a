/**
 * Each family's prompt text against the model's official chat template,
 * rendered with @huggingface/jinja: the tool definitions, the assistant's
 * call text and the tool-result text we produce must appear verbatim in the
 * official rendering of the same conversation. The turn framing around them
 * is web-llm's conversation template, not ours, so it is not compared.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";
import type { FamilyName } from "../../../src/families/families.js";
import { call, shape, TOOLS, type Msg } from "./helpers.js";

// Copies of the official templates (sources: test/fixtures/chat-templates/SOURCES.md).
const TEMPLATES = fileURLToPath(new URL("../../fixtures/chat-templates/", import.meta.url));
const SYSTEM = "You are a weather bot.";
const QUESTION = "Weather and time in Paris?";
const CALLS = [call("abcDEF123", "get_weather", { location: "Paris", unit: "celsius" }), call("xyz789QRS", "get_time", { timezone: "Europe/Paris" })];
const RESULTS = ['{"temp": 21}', '"14:05"'];

function conversation(calls = CALLS): Msg[] {
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: QUESTION },
    { role: "assistant", content: "", tool_calls: calls },
    ...calls.map((c, i): Msg => ({ role: "tool", tool_call_id: c.id, content: RESULTS[i] })),
  ];
}

/** The conversation as HF templates take it: arguments as objects, content null beside calls where the template wants that. */
function hfMessages(messages: Msg[], nullContent = false, jsonResults = false) {
  return messages.map((m) => ({
    ...m,
    content: m.tool_calls && nullContent ? null : m.role === "tool" && jsonResults ? JSON.parse(m.content!) : m.content,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: JSON.parse(c.function.arguments) } })) } : {}),
  }));
}

function render(file: string, messages: Msg[], extra: Record<string, unknown> = {}, nullContent = false, jsonResults = false): string {
  const template = new Template(readFileSync(TEMPLATES + file, "utf8"));
  return template.render({
    messages: hfMessages(messages, nullContent, jsonResults),
    tools: TOOLS,
    add_generation_prompt: true,
    bos_token: "<s>",
    eos_token: "</s>",
    ...extra,
  });
}

/** Our text of each shaped message, cut where the app's own texts sit (those are the app's, placed by web-llm's framing). */
function ourPieces(family: FamilyName, messages: Msg[], thinking = false): string[] {
  const { shaped } = shape(family, messages, { thinking });
  return shaped.flatMap((m) => (m.content as string).split(SYSTEM).flatMap((p) => p.split(QUESTION))).map((p) => p.trim()).filter(Boolean);
}

function expectAllIn(rendered: string, pieces: string[]) {
  for (const piece of pieces) expect(rendered, `missing piece:\n${piece}`).toContain(piece);
}

describe("prompt text matches the official templates", () => {
  it("Qwen2.5: tools block in the system turn, <tool_call> JSON, <tool_response> results in one user turn", () => {
    const pieces = ourPieces("qwen2.5", conversation());
    expect(pieces.some((p) => p.startsWith("# Tools"))).toBe(true);
    expect(pieces.some((p) => p.includes('<tool_call>\n{"name": "get_time"'))).toBe(true);
    expectAllIn(render("Qwen-Qwen2.5-7B-Instruct.jinja", conversation()), pieces);
  });

  it("Qwen3: the same, with no default system text", () => {
    const rendered = render("Qwen-Qwen3-0.6B.jinja", conversation());
    const { shaped } = shape("qwen3", conversation());
    expect(shaped.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(rendered).toContain(`<|im_start|>system\n${shaped[0].content as string}<|im_end|>`);
    expect(rendered).toContain(`<|im_start|>assistant\n${shaped[2].content as string}<|im_end|>`);
    expect(rendered).toContain(`<|im_start|>user\n${shaped[3].content as string}<|im_end|>`);
  });

  it("Qwen3: reasoning of turns before the last user query is dropped, later turns keep it (raw text restored)", () => {
    const messages: Msg[] = [
      { role: "user", content: "one" },
      { role: "assistant", content: "<think>\nfirst thoughts\n</think>\n\nFirst answer." },
      { role: "user", content: QUESTION },
      { role: "assistant", content: "<think>\nplan\n</think>\n\n", tool_calls: [CALLS[0]] },
      { role: "tool", tool_call_id: CALLS[0].id, content: RESULTS[0] },
    ];
    const rendered = render("Qwen-Qwen3-0.6B.jinja", messages);
    // The host restores raw text; give both assistant turns theirs.
    const raw = (m: { content: unknown; toolCalls: unknown[] }) =>
      m.toolCalls.length ? '<think>\nplan\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}\n</tool_call>' : m.content === "" ? undefined : (m.content as string);
    const { shaped } = shape("qwen3", messages, { raw: (m) => (m.role === "assistant" ? raw(m) : undefined) });
    expect(shaped.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(shaped[2].content).toBe("First answer.");
    expect(rendered).toContain(`<|im_start|>assistant\nFirst answer.<|im_end|>`);
    expect(shaped[4].content).toContain("<think>\nplan\n</think>");
    expect(rendered).toContain(`<|im_start|>assistant\n${shaped[4].content as string}<|im_end|>`);
  });

  it("Qwen3.5: tool block and reminder as in the official template excerpt; XML calls", () => {
    const excerpt = readFileSync(TEMPLATES + "Qwen3.5-35B-A3B.chat_template.jinja.excerpt", "utf8");
    const literal = (start: string) => {
      const line = excerpt.split("\n").find((l) => l.includes(start))!;
      const quoted = /(["'])((?:\\.|(?!\1).)*)\1/.exec(line.slice(line.indexOf(start) - 1))![2];
      return quoted.replace(/\\n/g, "\n").replace(/\\"/g, '"');
    };
    const { shaped } = shape("qwen3.5", conversation());
    const system = shaped[0].content as string;
    expect(system).toContain(literal("# Tools\\n\\nYou have access"));
    expect(system).toContain(literal("\\n\\nIf you choose to call a function ONLY"));
    expect(system.endsWith("</IMPORTANT>\n\n" + SYSTEM)).toBe(true);
    expect(shaped[2].content).toBe(
      "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>\n" +
        "<tool_call>\n<function=get_time>\n<parameter=timezone>\nEurope/Paris\n</parameter>\n</function>\n</tool_call>",
    );
    expect(shaped[3]).toEqual({ role: "user", content: `<tool_response>\n${RESULTS[0]}\n</tool_response>\n<tool_response>\n${RESULTS[1]}\n</tool_response>` });
  });

  it.each(["NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"])(
    "Hermes (%s): function-calling system text, <tool_call> JSON, results in a tool turn",
    (file) => {
      const rendered = render(file, conversation());
      const { shaped, context } = shape("hermes", conversation());
      expect(shaped[3].role).toBe("tool");
      expect(rendered).toContain(`<|im_start|>tool\n${shaped[3].content as string}<|im_end|>`);
      expect(rendered).toContain(`<|im_start|>assistant\n${shaped[2].content as string}<|im_end|>`);
      expectAllIn(rendered, ourPieces("hermes", conversation()));
      expect(context.tools).toHaveLength(2);
    },
  );

  it.each(["meta-llama-Llama-3.1-8B-Instruct.jinja", "meta-llama-Llama-3.2-3B-Instruct.jinja"])(
    "Llama (%s): ipython system, tools in the first user turn, {\"name\", \"parameters\"} call, ipython result",
    (file) => {
      const single = conversation([CALLS[0]]);
      // Results given as JSON values, as HF callers pass them (a string would be JSON-quoted by the template).
      const rendered = render(file, single, { date_string: "26 Jul 2024" }, false, true);
      const { shaped } = shape("llama-3.1", single);
      expect(rendered).toContain(`<|start_header_id|>system<|end_header_id|>\n\n${shaped[0].content as string}<|eot_id|>`);
      expect(rendered).toContain(`<|start_header_id|>user<|end_header_id|>\n\n${shaped[1].content as string}<|eot_id|>`);
      expect(rendered).toContain(`<|start_header_id|>assistant<|end_header_id|>\n\n${shaped[2].content as string}<|eot_id|>`);
      expect(shaped[3]).toEqual({ role: "tool", content: RESULTS[0] });
      expect(rendered).toContain(`<|start_header_id|>ipython<|end_header_id|>\n\n${RESULTS[0]}<|eot_id|>`);
    },
  );

  it("Mistral v0.3 (Nemo-style template): [AVAILABLE_TOOLS], [TOOL_CALLS] list with 9-char ids, [TOOL_RESULTS] with call_id", () => {
    const rendered = render("mistralai-Mistral-Nemo-Instruct-2407.jinja", conversation(), {}, true);
    const { shaped } = shape("mistral-v0.3", conversation());
    expect(shaped[2].content).toMatch(/^\[TOOL_CALLS\]\[/);
    expect(rendered).toContain((shaped[2].content as string) + "</s>");
    expect(rendered).toContain(shaped[3].content as string);
    expectAllIn(rendered, ourPieces("mistral-v0.3", conversation()));
  });

  it("Ministral-3 (v13) against the v11 Mistral-Small-3.2 template: same system and tools block; calls and results differ only by v11's ids", () => {
    const rendered = render("Mistral-Small-3.2-24B-Instruct-2506.jinja", conversation());
    const { shaped } = shape("ministral-3", conversation());
    expect(rendered).toContain(shaped[0].content as string);
    expect(shaped[0].content).toMatch(/^\[SYSTEM_PROMPT\]You are a weather bot\.\[\/SYSTEM_PROMPT\]\[AVAILABLE_TOOLS\]/);
    const v13 = rendered.replace(/\[CALL_ID\][a-zA-Z0-9]{9}/g, "").replace(/\[TOOL_RESULTS\][a-zA-Z0-9]{9}\[TOOL_CONTENT\]/g, "[TOOL_RESULTS]");
    expect(v13).toContain((shaped[2].content as string) + "</s>");
    // web-llm's ministral3 template wraps a tool turn in [TOOL_RESULTS]…[/TOOL_RESULTS].
    expect(shaped[3].role).toBe("tool");
    expect(v13).toContain(`[TOOL_RESULTS]${shaped[3].content as string}[/TOOL_RESULTS]`);
  });

  it.each([false, true])("Gemma 4 (thinking %s): <|tool> declarations, call:name{…} calls, tool responses", (thinking) => {
    const rendered = render("gemma-4-e2b.ollama-testdata.jinja2", conversation(), { enable_thinking: thinking });
    const { shaped } = shape("gemma-4", conversation(), { thinking });
    expect(rendered).toContain(`<|turn>system\n${shaped[0].content as string}<turn|>`);
    expect((shaped[0].content as string).startsWith("<|think|>\n")).toBe(thinking);
    expect(rendered).toContain(`<|turn>model\n${shaped[2].content as string}`);
    expect(rendered).toContain(shaped[3].content as string);
    expect(shaped[3].content).toBe(
      '<|tool_response>response:get_weather{value:<|"|>{"temp": 21}<|"|>}<tool_response|><|tool_response>response:get_time{value:<|"|>"14:05"<|"|>}<tool_response|>',
    );
  });

  it("Gemma 4: nested parameters and argument values are written as the template writes them", () => {
    const tool = {
      type: "function" as const,
      function: {
        name: "plan",
        description: "Plan a trip",
        parameters: {
          type: "object",
          properties: {
            stops: { type: "array", description: "Stops", items: { type: "object", properties: { city: { type: "string" }, nights: { type: "integer" } }, required: ["city"] } },
            Budget: { type: "number", nullable: true },
            options: { type: "object", properties: { fast: { type: "boolean", description: "Hurry" } } },
          },
          required: ["stops"],
        },
      },
    };
    const planCall = call("c1", "plan", { stops: [{ city: "Rome", nights: 2 }], Budget: 1.5, options: { fast: true, note: null } });
    const messages: Msg[] = [{ role: "user", content: "go" }, { role: "assistant", content: "", tool_calls: [planCall] }, { role: "tool", tool_call_id: "c1", content: "ok" }];
    const template = new Template(readFileSync(TEMPLATES + "gemma-4-e2b.ollama-testdata.jinja2", "utf8"));
    const rendered = template.render({ messages: hfMessages(messages), tools: [tool], add_generation_prompt: true, bos_token: "<bos>" });
    const { shaped } = shape("gemma-4", messages, { tools: [tool] });
    expect(rendered).toContain(`<|turn>system\n${shaped[0].content as string}<turn|>`);
    expect(rendered).toContain(shaped[1].content as string);
    expect(rendered).toContain(shaped[2].content as string);
  });

  // Families without a template tool format get our prompted text: their templates must still accept the shaped turns.
  it.each([
    ["gemma", "google-gemma-2-2b-it.jinja"],
    ["prompted", "microsoft-Phi-3.5-mini-instruct.jinja"],
  ] as const)("%s: the shaped conversation renders through %s (no system turn where it has none), tool text included", (family, file) => {
    const { shaped } = shape(family, conversation());
    const template = new Template(readFileSync(TEMPLATES + file, "utf8"));
    // Alternating turns, as these templates demand: the tool results are a user turn after the assistant's calls.
    const rendered = template.render({ messages: shaped, add_generation_prompt: true, bos_token: "<bos>", eos_token: "<eos>" });
    for (const m of shaped) expect(rendered).toContain((m.content as string).trim());
    expect(rendered).toContain("# Tools");
  });

  it("DeepSeek-R1-Distill: earlier turns lose their reasoning exactly as the official template cuts it", () => {
    const messages: Msg[] = [{ role: "user", content: "one" }, { role: "assistant", content: "<think>\nhmm\n</think>\n\nFirst." }, { role: "user", content: "two" }];
    const rendered = new Template(readFileSync(TEMPLATES + "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "utf8")).render({ messages, add_generation_prompt: true, bos_token: "" });
    const { shaped } = shape("deepseek-r1", messages, { tools: [], raw: (m) => (m.role === "assistant" ? (m.content as string) : undefined) });
    expect(rendered).toContain(`<｜Assistant｜>${shaped[1].content as string}<｜end▁of▁sentence｜>`);
  });
});
