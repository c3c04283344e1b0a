/** The SSE reader the fallback uses on remote streams: framing rules servers differ on, and bytes split anywhere. */
import { describe, expect, it } from "vitest";
import { decodeSse, type SseEvent } from "../../src/client/sse-decoder.js";

/** A body delivering `text` in pieces of `size` bytes (UTF-8 characters may be cut in half). */
function body(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of decodeSse(stream)) events.push(event);
  return events;
}

const wire = [
  ": a comment, ignored",
  'data: {"a":1}',
  "",
  "event: error",
  'data: {"error":{"message":"é ü 😀"}}',
  "",
  "data:no-space",
  "data: second line",
  "",
  "id: 7",
  "retry: 100",
  "",
  "data: [DONE]",
  "",
  "",
].join("\n");

const expected: SseEvent[] = [
  { event: "message", data: '{"a":1}' },
  { event: "error", data: '{"error":{"message":"é ü 😀"}}' },
  { event: "message", data: "no-space\nsecond line" },
  { event: "message", data: "[DONE]" },
];

describe("decodeSse", () => {
  it("reads events, names, multi-line data and comments, whatever the piece size", async () => {
    for (const size of [1, 2, 3, 7, 64, 10_000]) expect(await all(body(wire, size))).toEqual(expected);
  });

  it("accepts \\r\\n and \\r line endings, even when \\r\\n is split across pieces", async () => {
    for (const size of [1, 5, 1000]) {
      expect(await all(body(wire.replaceAll("\n", "\r\n"), size))).toEqual(expected);
      expect(await all(body(wire.replaceAll("\n", "\r"), size))).toEqual(expected);
    }
  });

  it("yields a last event the server closed without a blank line", async () => {
    expect(await all(body('data: {"a":1}\n\ndata: tail', 4))).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "message", data: "tail" },
    ]);
  });

  it("cancels the body when the reader stops early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: 1\n\ndata: 2\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of decodeSse(stream)) {
      expect(event.data).toBe("1");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
