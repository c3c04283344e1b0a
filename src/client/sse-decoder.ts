/**
 * Reads server-sent events from a response body: what the fallback needs to
 * turn a remote server's stream back into chunks. Follows the SSE rules that
 * OpenAI-compatible servers rely on: events end at a blank line (`\n\n`,
 * `\r\n\r\n` or `\r\r`), `data:` lines join with `\n`, `:` lines are comments.
 */

/** One event: its name (`message` when none was given) and its data. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Yields the events of `body` in order; ends when the body closes. */
export async function* decodeSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let closed = false;
  const newline = /\r\n|\r|\n/g;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        closed = true;
        // Lenient where the spec is strict: a last event the server closed without its blank line still counts.
        buffer += decoder.decode() + "\n\n";
      } else buffer += decoder.decode(value, { stream: true });
      // Split into complete lines; a trailing `\r` may be the first half of `\r\n`, so wait for more.
      let start = 0;
      for (;;) {
        newline.lastIndex = start;
        const found = newline.exec(buffer);
        if (!found || (!closed && found[0] === "\r" && found.index === buffer.length - 1)) break;
        const line = buffer.slice(start, found.index);
        start = found.index + found[0].length;
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
      }
      buffer = buffer.slice(start);
      if (closed) return;
    }
  } finally {
    // A consumer that stops early (abort, break) closes the connection too.
    if (!closed) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
