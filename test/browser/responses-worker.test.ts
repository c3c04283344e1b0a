/** The Responses API through the default module worker, in real Chromium: events cross the port compacted and arrive intact. */
import { describe, expect, it } from "vitest";
import { createClient, ApiError, type ResponseObject, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const REPLY = '<think>Check the tool.</think>Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];

async function collect(stream: AsyncIterable<ResponseStreamEvent>) {
  const events: ResponseStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe("Responses through the worker", () => {
  it("streams the same events as the in-process host, then continues with previous_response_id", async () => {
    const replies = [REPLY, "It is sunny."];
    const worker = createClient({ engine: createScriptedEngine({ replies }) });
    const local = createClient({ engine: createScriptedEngine({ replies }), worker: false });
    const body = { model: MODEL, input: "Weather in Paris?", tools, reasoning: { summary: "auto" as const }, stream: true as const };
    const [viaWorker, inProcess] = await Promise.all([collect(await worker.responses.create(body)), collect(await local.responses.create(body))]);
    // Ids are random: compare with every id replaced by its position of first appearance.
    const ids = new Map<string, string>();
    const canon = (events: ResponseStreamEvent[]) => {
      ids.clear();
      return JSON.stringify(events).replace(/"(resp|msg|rs|fc|call)_[A-Za-z0-9]+"/g, (m) => (ids.has(m) ? ids.get(m) : (ids.set(m, `"id${ids.size}"`), `"id${ids.size - 1}"`)) as string).replace(/"(created_at|completed_at)":\d+/g, '"$1":0');
    };
    expect(canon(viaWorker)).toBe(canon(inProcess));
    const completed = viaWorker.at(-1) as { type: string; response: ResponseObject };
    expect(completed.type).toBe("response.completed");
    const call = completed.response.output.find((i) => i.type === "function_call") as { call_id: string };
    const next = await worker.responses.create({ model: MODEL, previous_response_id: completed.response.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }], tools });
    expect(next.output_text).toBe("It is sunny.");
    expect((await worker.responses.retrieve(next.id)).id).toBe(next.id);
    expect((await worker.responses.inputItems.list(next.id)).data[0]).toMatchObject({ type: "function_call_output", output: "sunny" });
    expect(await worker.responses.delete(next.id)).toMatchObject({ deleted: true });
    const missing = await worker.responses.retrieve(next.id).catch((e) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404 });
    worker.terminate();
  });

  it("keeps error fields and aborts across the worker", async () => {
    const words = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(" ");
    const client = createClient({ engine: createScriptedEngine({ replies: [words, "after"], tokenDelayMs: 1 }), responsesStore: { maxResponses: 1, databaseName: "responses-worker-test" } }); // its own database: retention of 1 would drop other files' responses
    const invalid = await client.responses.create({ model: MODEL, input: "x", previous_response_id: "resp_none" }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 400, code: "previous_response_not_found", param: "previous_response_id" });
    const stream = await client.responses.create({ model: MODEL, input: "x", stream: true });
    let n = 0;
    for await (const _e of stream) if (++n === 5) stream.controller.abort();
    expect(n).toBeLessThan(200);
    const after = await client.responses.create({ model: MODEL, input: "y", reasoning: { effort: "none" } });
    expect(after.output_text).toBe("after");
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    client.terminate();
  });
});
