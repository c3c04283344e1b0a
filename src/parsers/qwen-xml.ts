/**
 * Qwen3.5 / Qwen3-Coder XML calls:
 * `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n…</function>\n</tool_call>`
 * (also without the `<tool_call>` wrapper). Values are raw text, typed by the
 * declared tool's JSON schema (vLLM Qwen3CoderToolParser rules): string
 * parameters stream as JSON strings; other types are converted when the value
 * ends; parameters with no schema stay strings. One newline just inside
 * `<parameter=…>` on each side is not part of the value; a missing
 * `</parameter>` is tolerated.
 */
import type { FunctionTool } from "../protocol/types.js";
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { CallWriter, type CallBody } from "./call-writer.js";
import { JsonWriter } from "./json-writer.js";
import { findFirstMarker, isPrefixOf, isWs, partialMarkerLength } from "./partial-marker.js";

const FUNCTION = "<function=";
const PARAMETER = "<parameter=";
const PARAM_END = "</parameter>";
const FUNCTION_END = "</function>";
const VALUE_ENDS = [PARAM_END, PARAMETER, FUNCTION_END];

type Types = Set<string>;

class QwenFunctionBody implements CallBody {
  status: CallBody["status"] = "more";
  private readonly call: CallWriter;
  private readonly json: JsonWriter;
  private stage: "wrapper" | "name" | "between" | "key" | "value" = "wrapper";
  private name = "";
  private key = "";
  private types: Types = new Set();
  private streaming = false; // the value streams as a JSON string
  private buffered = "";
  private valueStarted = false;
  private heldNewline = false;

  constructor(sink: EventSink, private readonly tools: FunctionTool[], wrapped: boolean) {
    this.call = new CallWriter(sink);
    this.json = new JsonWriter(this.call);
    if (!wrapped) this.stage = "name";
  }

  get named(): boolean {
    return this.call.named;
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    while (i < text.length && this.status === "more") {
      switch (this.stage) {
        case "wrapper": {
          while (i < text.length && isWs(text.charCodeAt(i))) i++;
          const rest = text.slice(i, i + FUNCTION.length);
          if (rest === FUNCTION) {
            i += FUNCTION.length;
            this.stage = "name";
            continue;
          }
          if (!end && isPrefixOf(rest, FUNCTION)) return i;
          return this.fail(i);
        }
        case "name": {
          const close = text.indexOf(">", i);
          const part = close < 0 ? text.slice(i) : text.slice(i, close);
          if (/[\s<]/.test(part) || this.name.length + part.length > 128) return this.fail(i);
          this.name += part;
          if (close < 0) return text.length;
          if (!this.name) return this.fail(i);
          this.call.begin(this.name);
          this.json.open("o");
          i = close + 1;
          this.stage = "between";
          continue;
        }
        case "between": {
          while (i < text.length && isWs(text.charCodeAt(i))) i++;
          if (i === text.length) return i;
          const rest = text.slice(i, i + PARAMETER.length);
          if (rest === PARAMETER) {
            i += PARAMETER.length;
            this.key = "";
            this.stage = "key";
            continue;
          }
          if (rest.startsWith(FUNCTION_END.slice(0, rest.length)) && text.startsWith(FUNCTION_END, i)) {
            i += FUNCTION_END.length;
            this.endCall();
            continue;
          }
          if (rest.startsWith(PARAM_END.slice(0, rest.length)) && text.startsWith(PARAM_END, i)) {
            i += PARAM_END.length; // a stray close after a value that ended at another marker
            continue;
          }
          const partialMarker = isPrefixOf(text.slice(i), PARAMETER) || isPrefixOf(text.slice(i), FUNCTION_END) || isPrefixOf(text.slice(i), PARAM_END);
          if (!end && partialMarker) return i;
          if (partialMarker) {
            // Output cut inside a marker: the call is cut; the half marker is markup, not content.
            this.cutCall();
            return text.length;
          }
          // Anything else inside a function: the call ends here.
          this.endCall();
          return i;
        }
        case "key": {
          const close = text.indexOf(">", i);
          this.key += close < 0 ? text.slice(i) : text.slice(i, close);
          if (close < 0) return text.length;
          i = close + 1;
          this.startValue();
          continue;
        }
        case "value": {
          if (!this.valueStarted) {
            if (text[i] === "\n") i++;
            this.valueStarted = true;
            continue;
          }
          const hit = findFirstMarker(text, VALUE_ENDS, i);
          if (!hit) {
            const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(i, text.length - 16)), VALUE_ENDS);
            this.valueText(text.slice(i, text.length - keep), false);
            return text.length - keep;
          }
          this.valueText(text.slice(i, hit.at), true);
          this.endValue();
          i = hit.marker === PARAM_END ? hit.at + PARAM_END.length : hit.at;
          this.stage = "between";
          continue;
        }
      }
    }
    return i;
  }

  /**
   * End of output: a call whose last value closed is complete (only its
   * closing tags are missing); one cut inside a key or value is cut, with
   * the parameters it has.
   */
  finish(): void {
    if (this.status !== "more") return;
    if (!this.call.named) {
      this.status = "fail";
      return;
    }
    if (this.stage === "between") return this.endCall();
    // Cut inside the function: the call keeps the parameters it has (a value cut short ends where it stopped).
    if (this.stage === "value") {
      this.valueText("", true);
      this.endValue();
    }
    this.cutCall();
  }

  private cutCall(): void {
    this.json.close();
    this.call.cut();
    this.status = "done";
  }

  private startValue(): void {
    this.stage = "value";
    this.valueStarted = false;
    this.heldNewline = false;
    this.buffered = "";
    this.types = paramTypes(this.tools, this.name, this.key);
    this.streaming = this.types.size === 0 || this.types.has("string");
    if (this.streaming) this.json.beginString(this.key);
  }

  /** Value text; a trailing newline waits (the one before `</parameter>` is not part of the value). */
  private valueText(text: string, last: boolean): void {
    let chunk = (this.heldNewline ? "\n" : "") + text;
    this.heldNewline = false;
    if (chunk.endsWith("\n")) {
      chunk = chunk.slice(0, -1);
      this.heldNewline = !last;
    }
    if (this.streaming) this.json.stringText(chunk);
    else this.buffered += chunk;
  }

  private endValue(): void {
    if (this.streaming) this.json.endString();
    else this.json.scalar(convertValue(this.buffered, this.types), this.key);
  }

  private endCall(): void {
    this.json.close();
    this.call.end();
    this.status = "done";
  }

  private fail(i: number): number {
    if (this.call.named) {
      this.endCall();
      return i;
    }
    this.status = "fail";
    return i;
  }
}

/** The JSON types the schema allows for a parameter (empty: no schema). */
function paramTypes(tools: FunctionTool[], name: string, key: string): Types {
  const tool = tools.find((t) => t.function.name === name);
  const props = (tool?.function.parameters as { properties?: Record<string, unknown> } | undefined)?.properties;
  const schema = props?.[key] as Record<string, unknown> | undefined;
  const types: Types = new Set();
  const collect = (s: unknown) => {
    if (!s || typeof s !== "object") return;
    const o = s as Record<string, unknown>;
    if (typeof o.type === "string") types.add(o.type);
    if (Array.isArray(o.type)) for (const t of o.type) if (typeof t === "string") types.add(t);
    for (const k of ["anyOf", "oneOf"]) if (Array.isArray(o[k])) for (const sub of o[k] as unknown[]) collect(sub);
    if (o.enum && !o.type) types.add("string");
  };
  collect(schema);
  return types;
}

/** A non-string parameter's text as JSON, by its schema types; text that does not fit stays a string. */
export function convertValue(raw: string, types: Types): string {
  const t = raw.trim();
  if ((t === "null" || t === "None") && types.size > 0) return "null";
  if (types.has("integer") || types.has("number")) {
    if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t)) return JSON.stringify(Number(t));
  }
  if (types.has("boolean")) {
    if (/^true$/i.test(t)) return "true";
    if (/^false$/i.test(t)) return "false";
  }
  if (types.has("object") || types.has("array")) {
    try {
      const v: unknown = JSON.parse(t);
      if (typeof v === "object" && v !== null) return JSON.stringify(v);
    } catch {
      // not JSON: a string
    }
  }
  return JSON.stringify(raw);
}

export function createQwenXmlParser(sink: EventSink, tools: FunctionTool[]): FormatParser {
  return new MarkerParser(sink, [
    { marker: "<tool_call>", close: "</tool_call>", body: (s) => new QwenFunctionBody(s, tools, true) },
    { marker: FUNCTION, close: "</tool_call>", body: (s) => new QwenFunctionBody(s, tools, false) },
  ]);
}
