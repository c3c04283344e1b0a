/**
 * Every vector of test/fixtures/toolcall-vectors.jsonl, in several chunkings,
 * through the family parser into the Responses output builder: the stream's
 * events are in the spec's order with consecutive sequence numbers, their
 * deltas rebuild exactly the final output items, and those items say what the
 * chat face's message says for the same events (content, reasoning, calls).
 */
import { describe, expect, it } from "vitest";
import { createOutputParser } from "../../src/parsers/index.js";
import { ChoiceBuilder } from "../../src/protocol/choice-builder.js";
import { ResponseOutputBuilder } from "../../src/protocol/responses/output-builder.js";
import type { OutputItem, ResponseStreamEvent } from "../../src/protocol/responses/types.js";
import { chunkings, loadVectors, optionsFor } from "./support/vectors.js";

/** Per output item, the allowed event types in order (deltas may repeat). */
function checkOrder(events: ResponseStreamEvent[]): void {
  const open = new Map<number, string[]>();
  let last = -1;
  for (const e of events) {
    expect(e.sequence_number).toBe(last + 1);
    last = e.sequence_number;
    if (!("output_index" in e)) continue;
    const seen = open.get(e.output_index) ?? [];
    if (e.type === "response.output_item.added") expect(seen).toEqual([]);
    else expect(seen[0], `${e.type} before its item was added`).toBe("response.output_item.added");
    expect(seen.includes("response.output_item.done"), `${e.type} after output_item.done`).toBe(false);
    if (e.type.endsWith(".delta")) {
      const done = e.type.replace(/\.delta$/, ".done");
      expect(seen.includes(done), `${e.type} after ${done}`).toBe(false);
    }
    seen.push(e.type);
    open.set(e.output_index, seen);
  }
  // Items are added in output order, one at a time: an item is done before the next is added.
  const order = events.filter((e) => e.type === "response.output_item.added" || e.type === "response.output_item.done").map((e) => `${e.type.endsWith("added") ? "+" : "-"}${(e as { output_index: number }).output_index}`);
  expect(order).toEqual(order.map((_, i) => `${i % 2 === 0 ? "+" : "-"}${Math.floor(i / 2)}`));
}

function rebuild(events: ResponseStreamEvent[]): OutputItem[] {
  const items: Record<string, any>[] = [];
  for (const e of events) {
    if (e.type === "response.output_item.added") items[e.output_index] = structuredClone(e.item);
    else if (e.type === "response.content_part.added") items[e.output_index].content[e.content_index] = structuredClone(e.part);
    else if (e.type === "response.reasoning_summary_part.added") items[e.output_index].summary[e.summary_index] = structuredClone(e.part);
    else if (e.type === "response.output_text.delta" || e.type === "response.reasoning_text.delta") items[e.output_index].content[e.content_index].text += e.delta;
    else if (e.type === "response.reasoning_summary_text.delta") items[e.output_index].summary[e.summary_index].text += e.delta;
    else if (e.type === "response.function_call_arguments.delta") items[e.output_index].arguments += e.delta;
    else if (e.type === "response.output_item.done") {
      if ("status" in e.item) items[e.output_index].status = e.item.status;
      expect(e.item).toEqual(items[e.output_index]);
    } else if (e.type === "response.output_text.done" || e.type === "response.reasoning_text.done") expect(e.text).toBe(items[e.output_index].content[e.content_index].text);
    else if (e.type === "response.function_call_arguments.done") expect(e.arguments).toBe(items[e.output_index].arguments);
  }
  return items as OutputItem[];
}

describe("Responses output over the tool-call and reasoning vectors", () => {
  for (const v of loadVectors()) {
    it(v.id, () => {
      for (const { label, chunks } of chunkings(v.model_output)) {
        for (const summary of [false, true]) {
          const options = optionsFor(v);
          const parser = createOutputParser(options);
          const chatParser = createOutputParser(options);
          let n = 0;
          const events: ResponseStreamEvent[] = [];
          const builder = new ResponseOutputBuilder({ emit: (e) => events.push(...e), summary, logprobs: false, newCallId: () => `call_${n++}` });
          const choice = new ChoiceBuilder(0, () => "x");
          for (const chunk of chunks) {
            builder.write(parser.push(chunk), undefined);
            choice.deltas(chatParser.push(chunk));
          }
          builder.write(parser.finish(), undefined);
          choice.deltas(chatParser.finish());
          builder.finish("stop");
          checkOrder(events);
          expect(rebuild(events), `${v.id} ${label}`).toEqual(builder.output);

          const message = choice.message();
          const text = builder.output.filter((i) => i.type === "message").map((i) => (i as { content: { text: string }[] }).content[0].text).join("");
          expect(text, `${v.id} ${label}: content`).toBe(message.content ?? "");
          const reasoning = builder.output.filter((i) => i.type === "reasoning").map((i) => (i as { content: { text: string }[] }).content[0].text).join("");
          expect(reasoning, `${v.id} ${label}: reasoning`).toBe(message.reasoning_content ?? "");
          const calls = builder.output.filter((i) => i.type === "function_call").map((i) => ({ name: (i as { name: string }).name, arguments: (i as { arguments: string }).arguments }));
          expect(calls, `${v.id} ${label}: calls`).toEqual((message.tool_calls ?? []).map((c) => ({ name: c.function!.name, arguments: c.function!.arguments })));
          for (const item of builder.output) {
            if (item.type === "function_call") expect(() => JSON.parse(item.arguments)).not.toThrow();
            if (item.type === "reasoning") expect(item.summary).toEqual(summary ? [{ type: "summary_text", text: item.content?.[0].text }] : []);
          }
        }
      }
    });
  }
});
