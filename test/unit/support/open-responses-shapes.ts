/**
 * Shape checks for the Open Responses specification (openresponses/openresponses,
 * schema/components/schemas: ResponseResource.json, Message.json, the
 * *StreamingEvent.json files, CompactResource.json), written here from the
 * required fields and types the OpenAPI document lists. Each check returns the
 * list of violations as `path: problem`, empty when the value conforms.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v);

type Kind = "string" | "int" | "number" | "boolean" | "array" | "object" | "any";
const is = (kind: Kind, v: unknown) =>
  kind === "any" ? v !== undefined
  : kind === "int" ? isInt(v)
  : kind === "array" ? Array.isArray(v)
  : kind === "object" ? isObject(v)
  : typeof v === kind;

/** field → kind; a trailing "?" on the kind means the value may be null (but must be present). */
function fields(value: unknown, at: string, spec: Record<string, `${Kind}` | `${Kind}?`>): string[] {
  if (!isObject(value)) return [`${at}: expected an object`];
  const errors: string[] = [];
  for (const [name, kindSpec] of Object.entries(spec)) {
    const nullable = kindSpec.endsWith("?");
    const kind = kindSpec.replace("?", "") as Kind;
    const v = value[name];
    if (!(name in value)) errors.push(`${at}.${name}: required, missing`);
    else if (v === null ? !nullable : !is(kind, v)) errors.push(`${at}.${name}: expected ${kindSpec}, got ${JSON.stringify(v)?.slice(0, 60)}`);
  }
  return errors;
}

/** ResponseResource.json: every property in its `required` list. */
export function checkResponse(value: unknown, at = "response"): string[] {
  const errors = fields(value, at, {
    id: "string", object: "string", created_at: "int", completed_at: "int?", status: "string", incomplete_details: "object?",
    model: "string", previous_response_id: "string?", instructions: "any?", output: "array", error: "object?", tools: "array",
    tool_choice: "any", truncation: "string", parallel_tool_calls: "boolean", text: "object", top_p: "number",
    presence_penalty: "number", frequency_penalty: "number", top_logprobs: "int", temperature: "number", reasoning: "object?",
    user: "string?", usage: "object?", max_output_tokens: "int?", max_tool_calls: "int?", store: "boolean", background: "boolean",
    service_tier: "string", metadata: "any", safety_identifier: "string?", prompt_cache_key: "string?",
  });
  if (!isObject(value)) return errors;
  if (value.object !== "response") errors.push(`${at}.object: expected "response"`);
  if (!["completed", "incomplete", "failed", "in_progress", "queued", "cancelled"].includes(String(value.status))) errors.push(`${at}.status: unknown value ${String(value.status)}`);
  if (value.status === "completed" && !isInt(value.completed_at)) errors.push(`${at}.completed_at: a completed response carries its completion time`);
  if (isObject(value.usage)) errors.push(...checkUsage(value.usage, `${at}.usage`));
  if (Array.isArray(value.output)) value.output.forEach((item, i) => errors.push(...checkOutputItem(item, `${at}.output[${i}]`)));
  return errors;
}

export function checkUsage(value: unknown, at: string): string[] {
  const errors = fields(value, at, { input_tokens: "int", output_tokens: "int", total_tokens: "int", input_tokens_details: "object", output_tokens_details: "object" });
  if (!isObject(value)) return errors;
  errors.push(...fields(value.input_tokens_details, `${at}.input_tokens_details`, { cached_tokens: "int" }));
  errors.push(...fields(value.output_tokens_details, `${at}.output_tokens_details`, { reasoning_tokens: "int" }));
  if (isInt(value.input_tokens) && isInt(value.output_tokens) && value.total_tokens !== (value.input_tokens as number) + (value.output_tokens as number)) errors.push(`${at}.total_tokens: not input + output`);
  return errors;
}

/** Message.json, FunctionCall.json, ReasoningBody.json, the compaction item. */
export function checkOutputItem(item: unknown, at: string): string[] {
  if (!isObject(item)) return [`${at}: expected an object`];
  switch (item.type) {
    case "message": {
      const errors = fields(item, at, { id: "string", status: "string", role: "string", content: "array" });
      if (!["in_progress", "completed", "incomplete"].includes(String(item.status))) errors.push(`${at}.status: not a MessageStatus: ${String(item.status)}`);
      (item.content as unknown[] | undefined)?.forEach?.((part, j) => {
        if (isObject(part) && part.type === "output_text") errors.push(...fields(part, `${at}.content[${j}]`, { text: "string", annotations: "array", logprobs: "array" }));
        else if (!isObject(part) || typeof part.type !== "string") errors.push(`${at}.content[${j}]: expected a typed part`);
      });
      return errors;
    }
    case "function_call":
      return fields(item, at, { id: "string", call_id: "string", name: "string", arguments: "string", status: "string" });
    case "reasoning":
      return fields(item, at, { id: "string", summary: "array" });
    case "compaction":
      return fields(item, at, { id: "string", encrypted_content: "string" });
    default:
      return [`${at}.type: unexpected output item type ${String(item.type)}`];
  }
}

/** The *StreamingEvent.json schemas: required fields per event type. */
const EVENT_FIELDS: Record<string, Record<string, `${Kind}` | `${Kind}?`>> = {
  "response.created": { response: "object" },
  "response.queued": { response: "object" },
  "response.in_progress": { response: "object" },
  "response.completed": { response: "object" },
  "response.incomplete": { response: "object" },
  "response.failed": { response: "object" },
  "response.output_item.added": { output_index: "int", item: "object" },
  "response.output_item.done": { output_index: "int", item: "object" },
  "response.content_part.added": { item_id: "string", output_index: "int", content_index: "int", part: "object" },
  "response.content_part.done": { item_id: "string", output_index: "int", content_index: "int", part: "object" },
  "response.output_text.delta": { item_id: "string", output_index: "int", content_index: "int", delta: "string", logprobs: "array" },
  "response.output_text.done": { item_id: "string", output_index: "int", content_index: "int", text: "string", logprobs: "array" },
  "response.function_call_arguments.delta": { item_id: "string", output_index: "int", delta: "string" },
  "response.function_call_arguments.done": { item_id: "string", output_index: "int", arguments: "string" },
  "response.reasoning_text.delta": { item_id: "string", output_index: "int", content_index: "int", delta: "string" },
  "response.reasoning_text.done": { item_id: "string", output_index: "int", content_index: "int", text: "string" },
  "response.reasoning_summary_part.added": { item_id: "string", output_index: "int", summary_index: "int", part: "object" },
  "response.reasoning_summary_part.done": { item_id: "string", output_index: "int", summary_index: "int", part: "object" },
  "response.reasoning_summary_text.delta": { item_id: "string", output_index: "int", summary_index: "int", delta: "string" },
  "response.reasoning_summary_text.done": { item_id: "string", output_index: "int", summary_index: "int", text: "string" },
  error: { message: "string" },
};

export function checkEvent(event: unknown, at: string): string[] {
  if (!isObject(event)) return [`${at}: expected an object`];
  const spec = EVENT_FIELDS[String(event.type)];
  if (!spec) return [`${at}.type: not a streaming event of the spec: ${String(event.type)}`];
  const errors = fields(event, at, { type: "string", sequence_number: "int", ...spec });
  if (isObject(event.response)) errors.push(...checkResponse(event.response, `${at}.response`));
  if (event.type === "response.output_item.done" && isObject(event.item)) errors.push(...checkOutputItem(event.item, `${at}.item`));
  return errors;
}

/** CompactResource.json. */
export function checkCompaction(value: unknown): string[] {
  const errors = fields(value, "compaction", { id: "string", object: "string", output: "array", created_at: "int", usage: "object" });
  if (!isObject(value)) return errors;
  if (value.object !== "response.compaction") errors.push(`compaction.object: expected "response.compaction"`);
  errors.push(...checkUsage(value.usage, "compaction.usage"));
  return errors;
}

export interface SseEvent { event: string; data: Json }

/** Reads `event:` / `data:` frames; `[DONE]` is not an event. */
export async function readSse(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  const events: SseEvent[] = [];
  for (const frame of text.split(/\n\n/)) {
    let name = "";
    const data: string[] = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0 || data.join("\n") === "[DONE]") continue;
    events.push({ event: name, data: JSON.parse(data.join("\n")) as Json });
  }
  return events;
}
