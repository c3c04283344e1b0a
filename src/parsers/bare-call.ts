/**
 * DESIGN policy for JSON calls written without any marker (Llama-3.x's
 * native format; small Hermes/Qwen models that forget `<tool_call>`): they
 * count only when the WHOLE reply is such calls — one object
 * `{"name": <declared tool>, "arguments"|"parameters": {…}}`, optionally in
 * a ```json fence; several separated by `;` (Llama's parallel form) are read
 * the same way. Prose anywhere around them makes the whole reply content.
 *
 * Streaming consequence: a reply that starts like such a call is held back
 * until the end of output (it cannot be known earlier that nothing follows);
 * as soon as its start stops looking like a call, it is released as content.
 * A reply cut inside its last call (after the call's name) ends with that
 * call, its arguments closed into valid JSON, counted as cut.
 */
import type { EventSink } from "./event-sink.js";
import type { FormatParser } from "./marker-parser.js";
import { JsonValueStream } from "./json-stream.js";
import { isWs } from "./partial-marker.js";

const HEADS = ['{"name":"', '```json{"name":"', '```{"name":"'];

export class BareCallGate implements FormatParser {
  private state: "start" | "holding" | "pass" = "start";
  private held = "";

  constructor(private readonly sink: EventSink, private readonly inner: FormatParser, private readonly declared: Set<string>) {}

  push(text: string): void {
    if (this.state === "pass") return this.inner.push(text);
    this.held += text;
    if (this.state === "start") {
      const squeezed = this.held.slice(0, 200).replace(/\s+/g, "");
      if (squeezed === "") return;
      if (HEADS.some((h) => squeezed.startsWith(h))) this.state = "holding";
      else if (!HEADS.some((h) => h.startsWith(squeezed))) this.release();
    }
  }

  finish(): void {
    if (this.state !== "pass") {
      const parsed = this.state === "holding" ? parseBareCalls(this.held, this.declared) : null;
      if (parsed) {
        for (const call of parsed.calls) {
          const index = this.sink.startCall(call.name);
          this.sink.args(index, call.args);
        }
        if (parsed.cut) this.sink.cut = true;
        return;
      }
      this.release();
    }
    this.inner.finish();
  }

  private release(): void {
    this.state = "pass";
    const text = this.held;
    this.held = "";
    this.inner.push(text);
  }
}

/** The calls a whole reply consists of (`cut`: the reply ended inside the last one), or null when it is anything else. */
export function parseBareCalls(text: string, declared: Set<string>): { calls: { name: string; args: string }[]; cut: boolean } | null {
  let body = text.trim();
  const fence = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(body);
  if (fence) body = fence[1];
  const calls: { name: string; args: string }[] = [];
  let i = 0;
  while (i < body.length) {
    while (i < body.length && (isWs(body.charCodeAt(i)) || (calls.length > 0 && body[i] === ";"))) i++;
    if (i === body.length) break;
    if (body[i] !== "{") return null;
    const stream = new JsonValueStream();
    const start = i;
    const stable = stream.feed(body, i, body.length);
    if (!stream.done) {
      // Cut inside this call (the output ended): a call once its name is written out whole.
      if (stream.failed || fence) return null;
      const call = callFromObject(stable + stream.close(), declared);
      if (!call || !new RegExp(`"name"\\s*:\\s*${escapeRegExp(JSON.stringify(call.name))}`).test(stable)) return null;
      calls.push(call);
      return { calls, cut: true };
    }
    i = stream.next;
    const call = callFromObject(body.slice(start, i), declared);
    if (!call) return null;
    calls.push(call);
  }
  return calls.length > 0 ? { calls, cut: false } : null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `{"name", "arguments"|"parameters"}` naming a declared tool, as name + arguments JSON text. */
export function callFromObject(json: string, declared: Set<string>): { name: string; args: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.name !== "string" || !declared.has(record.name)) return null;
  let args = record.arguments ?? record.parameters ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return null;
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  return { name: record.name, args: JSON.stringify(args) };
}
