/**
 * A seeded generator of malformed chat completion requests, for the bad-input
 * reliability test. Each case starts from a valid request (random but valid
 * optional fields) and breaks exactly one thing, so the generator knows which
 * status and which `param` the contract demands for it.
 */

/** Deterministic PRNG (mulberry32): the same seed gives the same 2 000 cases. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
type Body = Record<string, unknown>;

export interface MalformedCase {
  /** Which mutation made it, for failure messages. */
  kind: string;
  /** The request body: an object for the JS API; `raw` replaces it on the fetch layer. */
  body: unknown;
  /** A raw HTTP body (invalid JSON); fetch layer only. */
  raw?: string;
  /** Only reachable through client.fetch (the JS API takes objects, not bytes). */
  fetchOnly?: boolean;
  status: number;
  /** The `param` the error must name; null where none applies (the body as a whole). */
  param: string | null;
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** Values of every JSON type but the one a field wants. */
const WRONG: Record<string, readonly unknown[]> = {
  string: [5, -1.5, true, false, [], ["x"], {}, { a: 1 }],
  number: ["1", "hot", true, [], [0.5], {}, { v: 1 }],
  boolean: ["true", "false", 1, 0, [], {}, "yes"],
  object: ["x", 5, true, [], [{}]],
  array: ["x", 5, true, {}, { 0: "a" }],
};

const MODELS = ["Qwen3-0.6B", "Qwen/Qwen3-0.6B", "Qwen3-0.6B-q4f32_1-MLC", "Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B-Instruct"];
const tool = (name: string, parameters: unknown = { type: "object", properties: { q: { type: "string" } } }) => ({ type: "function", function: { name, description: "d", parameters } });

/** A valid request with a random selection of valid optional fields. */
export function validRequest(rng: Rng): Body {
  const messages: Body[] = [];
  if (rng() < 0.5) messages.push({ role: pick(rng, ["system", "developer"]), content: "Be brief." });
  messages.push({ role: "user", content: rng() < 0.8 ? `question ${int(rng, 0, 999)}` : [{ type: "text", text: "parts" }] });
  if (rng() < 0.3) {
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }] });
    messages.push({ role: "tool", tool_call_id: "call_1", content: "result" });
  }
  const body: Body = { model: pick(rng, MODELS), messages };
  const stream = rng() < 0.4;
  if (stream) {
    body.stream = true;
    if (rng() < 0.5) body.stream_options = { include_usage: rng() < 0.5 };
  }
  if (rng() < 0.4) body.temperature = Math.round(rng() * 200) / 100;
  if (rng() < 0.3) body.top_p = Math.round(rng() * 100) / 100;
  if (rng() < 0.3) body.max_tokens = int(rng, 1, 64);
  if (rng() < 0.2) body.stop = pick(rng, ["\n\n", ["END", "STOP"]]);
  if (rng() < 0.2) body.seed = int(rng, -1000, 1000);
  if (rng() < 0.3) {
    body.tools = [tool("lookup"), tool("other_tool")];
    if (rng() < 0.5) body.tool_choice = pick(rng, ["auto", "none", "required", { type: "function", function: { name: "lookup" } }]);
  }
  if (rng() < 0.2) body.reasoning_effort = pick(rng, ["none", "low", "high"]);
  if (rng() < 0.1) body.response_format = { type: "json_object" };
  if (!stream && rng() < 0.1) body.n = int(rng, 1, 3);
  return body;
}

/** Where a mutation wants a deeply nested value; replaced in the JSON text. */
const DEEP = "__deeply_nested__";

/** JSON text of a value nested `depth` levels deep in single-element arrays or objects. */
function nestedJson(depth: number, asArray: boolean): string {
  return asArray ? `${"[".repeat(depth)}"x"${"]".repeat(depth)}` : `${'{"x":'.repeat(depth)}{}${"}".repeat(depth)}`;
}

type Expected = Omit<MalformedCase, "body" | "kind"> & { deep?: { depth: number; asArray: boolean }; replace?: unknown };
type Mutation = (body: Body, rng: Rng) => Expected;

function wrongType(param: string, want: keyof typeof WRONG): Mutation {
  return (body, rng) => {
    body[param] = pick(rng, WRONG[want]);
    return { status: 400, param };
  };
}

function outOfRange(param: string, values: readonly number[]): Mutation {
  return (body, rng) => {
    body[param] = pick(rng, values);
    return { status: 400, param };
  };
}

const messagesOf = (body: Body) => body.messages as Body[];
const lastUser = (body: Body) => messagesOf(body).findIndex((m) => m.role === "user");

const MUTATIONS: Record<string, Mutation> = {
  // ── wrong types ───────────────────────────────────────────────────────────
  "model wrong type": wrongType("model", "string"),
  "messages wrong type": wrongType("messages", "array"),
  "stream wrong type": (body, rng) => {
    delete body.stream_options;
    body.stream = pick(rng, WRONG.boolean);
    return { status: 400, param: "stream" };
  },
  "temperature wrong type": wrongType("temperature", "number"),
  "top_p wrong type": wrongType("top_p", "number"),
  "max_tokens wrong type": wrongType("max_tokens", "number"),
  "max_completion_tokens wrong type": wrongType("max_completion_tokens", "number"),
  "seed wrong type": wrongType("seed", "number"),
  "presence_penalty wrong type": wrongType("presence_penalty", "number"),
  "logprobs wrong type": wrongType("logprobs", "boolean"),
  "parallel_tool_calls wrong type": wrongType("parallel_tool_calls", "boolean"),
  "tools wrong type": wrongType("tools", "array"),
  "response_format wrong type": wrongType("response_format", "object"),
  "logit_bias wrong type": wrongType("logit_bias", "object"),
  "provider wrong type": wrongType("provider", "object"),
  "reasoning wrong type": wrongType("reasoning", "object"),
  "chat_template_kwargs wrong type": wrongType("chat_template_kwargs", "object"),
  "prompt_cache_key wrong type": wrongType("prompt_cache_key", "string"),
  "stop wrong type": (body, rng) => {
    body.stop = pick(rng, [5, true, {}, [1], ["ok", 2], [null]]);
    return { status: 400, param: "stop" };
  },
  "stream_options wrong type": (body, rng) => {
    body.stream = true;
    body.stream_options = pick(rng, ["x", 5, true, []]);
    return { status: 400, param: "stream_options" };
  },
  "include_usage wrong type": (body, rng) => {
    body.stream = true;
    body.stream_options = { include_usage: pick(rng, WRONG.boolean) };
    return { status: 400, param: "stream_options.include_usage" };
  },
  "message not an object": (body, rng) => {
    const at = lastUser(body);
    (body.messages as unknown[])[at] = pick(rng, ["hi", 5, null, [], true]);
    return { status: 400, param: `messages[${at}]` };
  },
  "user content wrong type": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].content = pick(rng, [5, true, { text: "x" }]);
    return { status: 400, param: `messages[${at}].content` };
  },
  "content part wrong type": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].content = [pick(rng, ["x", 5, null])];
    return { status: 400, param: `messages[${at}].content[0]` };
  },
  "message name wrong type": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].name = pick(rng, WRONG.string);
    return { status: 400, param: `messages[${at}].name` };
  },
  "tool_calls wrong type": (body, rng) => {
    messagesOf(body).push({ role: "assistant", content: "x", tool_calls: pick(rng, ["x", 5, {}]) }, { role: "user", content: "go on" });
    return { status: 400, param: `messages[${messagesOf(body).length - 2}].tool_calls` };
  },
  "tool call arguments not a string": (body, rng) => {
    messagesOf(body).push({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: pick(rng, [{ a: 1 }, 5, [], true]) } }] });
    return { status: 400, param: `messages[${messagesOf(body).length - 1}].tool_calls[0].function.arguments` };
  },

  // ── missing fields ────────────────────────────────────────────────────────
  "model missing": (body) => {
    delete body.model;
    return { status: 400, param: "model" };
  },
  "model empty": (body, rng) => {
    body.model = pick(rng, ["", "   ", null]);
    return { status: 400, param: "model" };
  },
  "messages missing": (body, rng) => {
    if (rng() < 0.5) delete body.messages;
    else body.messages = null;
    return { status: 400, param: "messages" };
  },
  "messages empty": (body) => {
    body.messages = [];
    return { status: 400, param: "messages" };
  },
  "role missing": (body) => {
    const at = lastUser(body);
    delete messagesOf(body)[at].role;
    return { status: 400, param: `messages[${at}].role` };
  },
  "user content missing": (body) => {
    const at = lastUser(body);
    delete messagesOf(body)[at].content;
    return { status: 400, param: `messages[${at}].content` };
  },
  "system content missing": (body) => {
    messagesOf(body).unshift({ role: "system" });
    return { status: 400, param: "messages[0].content" };
  },
  "assistant content and tool_calls missing": (body) => {
    messagesOf(body).push({ role: "assistant" });
    return { status: 400, param: `messages[${messagesOf(body).length - 1}].content` };
  },
  "tool_call_id missing": (body, rng) => {
    messagesOf(body).push({ role: "tool", content: "r", ...(rng() < 0.5 ? { tool_call_id: "" } : {}) });
    return { status: 400, param: `messages[${messagesOf(body).length - 1}].tool_call_id` };
  },
  "tool call without function": (body) => {
    messagesOf(body).push({ role: "assistant", tool_calls: [{ id: "c", type: "function" }] });
    return { status: 400, param: `messages[${messagesOf(body).length - 1}].tool_calls[0]` };
  },
  "image part without url": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].content = [{ type: "text", text: "look" }, { type: "image_url", image_url: pick(rng, [{}, "x", null, { url: 5 }]) }];
    return { status: 400, param: `messages[${at}].content[1].image_url.url` };
  },

  // ── out-of-range numbers ──────────────────────────────────────────────────
  "temperature out of range": outOfRange("temperature", [-0.01, 2.01, 100, -1e9, 1e308]),
  "top_p out of range": outOfRange("top_p", [-0.5, 1.01, 7]),
  "min_p out of range": outOfRange("min_p", [-0.1, 1.5]),
  "top_k out of range": outOfRange("top_k", [-2, -100, 2.5]),
  "max_tokens out of range": outOfRange("max_tokens", [0, -1, -1e6, 1.5, 1e300]),
  "max_completion_tokens out of range": outOfRange("max_completion_tokens", [0, -5, 3.3]),
  "presence_penalty out of range": outOfRange("presence_penalty", [-2.01, 2.5, 1e6]),
  "frequency_penalty out of range": outOfRange("frequency_penalty", [-3, 2.0001]),
  "repetition_penalty out of range": outOfRange("repetition_penalty", [0, -1]),
  "top_logprobs out of range": outOfRange("top_logprobs", [-1, 31, 1000, 0.5]),
  "seed out of range": outOfRange("seed", [0.5, 1e300, -1e300]),
  "n out of range": (body, rng) => {
    delete body.stream;
    delete body.stream_options;
    body.n = pick(rng, [0, -1, 9, 100, 1.5]);
    return { status: 400, param: "n" };
  },
  "n with stream": (body, rng) => {
    body.stream = true;
    body.n = int(rng, 2, 8);
    return { status: 400, param: "n" };
  },
  "logit_bias out of range": (body, rng) => {
    body.logit_bias = pick(rng, [{ "12": 101 }, { "5": -1000 }, { abc: 1 }, { "7": "x" }]);
    return { status: 400, param: "logit_bias" };
  },
  "stop too many": (body) => {
    body.stop = Array.from({ length: 17 }, (_, i) => `s${i}`);
    return { status: 400, param: "stop" };
  },
  "stop empty string": (body, rng) => {
    body.stop = pick(rng, ["", ["a", ""]]);
    return { status: 400, param: "stop" };
  },
  "provider min memory negative": (body) => {
    body.provider = { min_memory_mb: -1 };
    return { status: 400, param: "provider.min_memory_mb" };
  },

  // ── unknown enums and roles ───────────────────────────────────────────────
  "unknown role": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].role = pick(rng, ["wizard", "USER", "function", "", "assistant ", 5, null]);
    return { status: 400, param: `messages[${at}].role` };
  },
  "unknown content part type": (body, rng) => {
    const at = lastUser(body);
    messagesOf(body)[at].content = [{ type: pick(rng, ["audio", "input_video", "file", "", "TEXT"]) }];
    return { status: 400, param: `messages[${at}].content[0].type` };
  },
  "image in a non-user message": (body) => {
    messagesOf(body).unshift({ role: "system", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] });
    return { status: 400, param: "messages[0].content[0]" };
  },
  "unknown reasoning effort": (body, rng) => {
    body.reasoning_effort = pick(rng, ["extreme", "", "HIGH", 3]);
    return { status: 400, param: "reasoning_effort" };
  },
  "unknown reasoning effort on a continuation": (body, rng) => {
    // The last message is the assistant's, to be continued (thinking forced off): a bad value is still a 400.
    messagesOf(body).push({ role: "assistant", content: "The answer is" });
    body.reasoning_effort = pick(rng, ["extreme", 3, ""]);
    return { status: 400, param: "reasoning_effort" };
  },
  "unknown reasoning.effort": (body, rng) => {
    delete body.reasoning_effort;
    body.reasoning = { effort: pick(rng, ["turbo", 1, true]) };
    return { status: 400, param: "reasoning.effort" };
  },
  "unknown response_format type": (body, rng) => {
    body.response_format = { type: pick(rng, ["xml", "json", "", 5]) };
    return { status: 400, param: "response_format.type" };
  },
  "json_schema without object": (body, rng) => {
    body.response_format = { type: "json_schema", json_schema: pick(rng, ["x", 5, null]) };
    return { status: 400, param: "response_format.json_schema" };
  },
  "json_schema schema not an object": (body, rng) => {
    body.response_format = { type: "json_schema", json_schema: { name: "s", schema: pick(rng, ["x", 5, [], true]) } };
    return { status: 400, param: "response_format.json_schema.schema" };
  },
  "unknown tool_choice": (body, rng) => {
    body.tools = [tool("lookup")];
    body.tool_choice = pick(rng, ["sometimes", "", 5, { type: "function" }, { type: "function", function: {} }, { type: "tool", function: { name: "lookup" } }]);
    return { status: 400, param: "tool_choice" };
  },
  "tool_choice names an undeclared tool": (body, rng) => {
    body.tools = [tool("lookup")];
    body.tool_choice = { type: "function", function: { name: pick(rng, ["missing", "LOOKUP", "lookup "]) } };
    return { status: 400, param: "tool_choice" };
  },
  "tool_choice required without tools": (body) => {
    delete body.tools;
    body.tool_choice = "required";
    return { status: 400, param: "tool_choice" };
  },

  // ── broken tool schemas ───────────────────────────────────────────────────
  "tool not a function tool": (body, rng) => {
    body.tools = [tool("ok"), pick(rng, ["x", 5, null, {}, { type: "function" }, { type: "retrieval", function: { name: "f" } }, { type: "function", function: "f" }])];
    delete body.tool_choice;
    return { status: 400, param: "tools[1]" };
  },
  "tool name invalid": (body, rng) => {
    body.tools = [tool(pick(rng, ["has space", "", "x".repeat(65), "naïve", "a/b", "semi;colon"]))];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.name" };
  },
  "tool name missing": (body, rng) => {
    body.tools = [{ type: "function", function: pick(rng, [{}, { name: 5 }, { name: null, parameters: {} }]) }];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.name" };
  },
  "tool name duplicated": (body) => {
    body.tools = [tool("same"), tool("other"), tool("same")];
    delete body.tool_choice;
    return { status: 400, param: "tools[2].function.name" };
  },
  "tool description wrong type": (body, rng) => {
    body.tools = [{ type: "function", function: { name: "f", description: pick(rng, [5, {}, ["d"]]) } }];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.description" };
  },
  "tool parameters not an object": (body, rng) => {
    body.tools = [tool("f", pick(rng, ["{}", 5, true, [{ type: "object" }]]))];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.parameters" };
  },
  "tool parameters not an object schema": (body, rng) => {
    body.tools = [tool("f", { type: pick(rng, ["array", "string", "integer", 5]) })];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.parameters.type" };
  },

  // ── images: never fetched ────────────────────────────────────────────────
  "remote image url": (body, rng) => {
    const at = lastUser(body);
    const url = pick(rng, ["https://example.com/cat.png", "http://127.0.0.1:1/x.jpg", "//cdn/x.png", "file:///etc/passwd", "blob:https://a/b", "DATA:image/png;base64,AA"]);
    messagesOf(body)[at].content = [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url } }];
    return { status: 400, param: `messages[${at}].content[1].image_url.url` };
  },
  "too many images": (body) => {
    const at = lastUser(body);
    messagesOf(body)[at].content = Array.from({ length: 9 }, () => ({ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }));
    return { status: 413, param: "messages" };
  },

  // ── huge strings ──────────────────────────────────────────────────────────
  "huge model name": (body, rng) => {
    body.model = "m".repeat(int(rng, 100_000, 1_000_000));
    return { status: 404, param: "model" };
  },
  "huge prompt": (body, rng) => {
    const at = lastUser(body);
    // Over the 4 096-token window of every model above: the contract's 400 context_length_exceeded.
    messagesOf(body)[at].content = "word ".repeat(int(rng, 5_000, 60_000));
    return { status: 400, param: "messages" };
  },
  "huge tool name": (body, rng) => {
    body.tools = [tool("t".repeat(int(rng, 65, 200_000)))];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.name" };
  },
  "huge unknown role": (body) => {
    const at = lastUser(body);
    messagesOf(body)[at].role = "r".repeat(300_000);
    return { status: 400, param: `messages[${at}].role` };
  },

  // ── deep nesting (built as JSON text: JSON.stringify itself overflows the stack on such values) ──
  "deeply nested content": (body, rng) => {
    const at = lastUser(body);
    const asArray = rng() < 0.5;
    messagesOf(body)[at].content = [DEEP];
    return { status: 400, param: asArray ? `messages[${at}].content[0]` : `messages[${at}].content[0].type`, deep: { depth: int(rng, 50, 100_000), asArray } };
  },
  "deeply nested tool parameters": (body, rng) => {
    body.tools = [tool("f", { type: "object", properties: { a: DEEP } })];
    delete body.tool_choice;
    return { status: 400, param: "tools[0].function.parameters", deep: { depth: int(rng, 100, 100_000), asArray: rng() < 0.3 } };
  },
  "deeply nested json_schema": (body, rng) => {
    body.response_format = { type: "json_schema", json_schema: { name: "s", schema: { type: "object", properties: { a: DEEP } } } };
    return { status: 400, param: "response_format.json_schema.schema", deep: { depth: int(rng, 100, 100_000), asArray: rng() < 0.3 } };
  },
  "deeply nested model": (body, rng) => {
    body.model = DEEP;
    return { status: 400, param: "model", deep: { depth: int(rng, 1_000, 100_000), asArray: rng() < 0.5 } };
  },

  // ── the body as a whole ───────────────────────────────────────────────────
  "body not an object": (_body, rng) => ({ status: 400, param: null, replace: pick(rng, [null, 5, "text", [], [{}], true]) }),
};

/** Invalid JSON text: only the fetch layer sees bytes. */
const INVALID_JSON = [
  "",
  "{",
  '{"model": "Qwen3-0.6B", "messages": [',
  '{"model": "Qwen3-0.6B",}',
  "{'model': 'Qwen3-0.6B'}",
  '{"model": "Qwen3-0.6B"} trailing',
  "undefined",
  "NaN",
  '{"model": NaN}',
  "\u0000",
  "[".repeat(100_000),
  '{"a":'.repeat(50_000),
  '{"model": "Qwen3-0.6B", "messages": [{"role": "user", "content": "\\x41"}]}',
];

/**
 * `count` malformed requests from `seed`. About one in eight is an invalid
 * JSON body (fetch layer only); every mutation kind appears.
 */
export function malformedRequests(seed: number, count: number): MalformedCase[] {
  const rng = seededRandom(seed);
  const kinds = Object.keys(MUTATIONS);
  const cases: MalformedCase[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 8 === 7) {
      cases.push({ kind: "invalid JSON body", body: undefined, raw: pick(rng, INVALID_JSON), fetchOnly: true, status: 400, param: null });
      continue;
    }
    // Round-robin first so every kind is covered, then random.
    const kind = i < kinds.length ? kinds[i] : pick(rng, kinds);
    const body = validRequest(rng);
    const { replace, deep, ...expected } = MUTATIONS[kind](body, rng);
    if (deep) {
      const raw = JSON.stringify(body).replace(JSON.stringify(DEEP), nestedJson(deep.depth, deep.asArray));
      cases.push({ kind: `${kind} (${deep.depth} levels)`, body: JSON.parse(raw), raw, ...expected });
    } else {
      cases.push({ kind, body: replace !== undefined || kind === "body not an object" ? replace : body, ...expected });
    }
  }
  return cases;
}
