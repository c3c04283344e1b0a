/**
 * Writes JSON for formats whose arguments are not JSON (Gemma 4, pythonic,
 * Qwen3.5 XML) while they stream. A key and its separator are written only
 * when its value starts, so the text written so far plus `close()` is always
 * valid JSON.
 */
import type { CallWriter } from "./call-writer.js";

export class JsonWriter {
  private readonly stack: { kind: "o" | "a"; count: number }[] = [];
  private inString = false;

  constructor(private readonly call: CallWriter) {}

  get depth(): number {
    return this.stack.length;
  }

  /** The innermost open container is an object. */
  get inObject(): boolean {
    return this.stack[this.stack.length - 1]?.kind === "o";
  }

  /** Start a value (in an object, under `key`). */
  private prefix(key: string | null): string {
    const top = this.stack[this.stack.length - 1];
    if (!top) return "";
    const sep = top.count++ > 0 ? "," : "";
    return top.kind === "o" ? `${sep}${JSON.stringify(key ?? "")}:` : sep;
  }

  open(kind: "o" | "a", key: string | null = null): void {
    this.call.write(this.prefix(key) + (kind === "o" ? "{" : "["));
    this.stack.push({ kind, count: 0 });
  }

  closeContainer(): void {
    const top = this.stack.pop();
    if (top) this.call.write(top.kind === "o" ? "}" : "]");
  }

  /** A complete scalar value, already JSON. */
  scalar(json: string, key: string | null = null): void {
    this.call.write(this.prefix(key) + json);
  }

  beginString(key: string | null = null): void {
    this.call.write(this.prefix(key) + '"');
    this.inString = true;
  }

  /** Raw characters of the open string (escaped here). */
  stringText(text: string): void {
    if (text) this.call.write(JSON.stringify(text).slice(1, -1));
  }

  endString(): void {
    this.call.write('"');
    this.inString = false;
  }

  /** Close whatever is open (end of output inside the arguments). */
  close(): void {
    if (this.inString) this.endString();
    while (this.stack.length > 0) this.closeContainer();
  }
}

/** A bare token as JSON: numbers and true/false/null as they are, anything else as a string. */
export function bareToJson(token: string): string {
  const t = token.trim();
  if (t === "true" || t === "false" || t === "null") return t;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) return t;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) && Number.isFinite(Number(t))) return JSON.stringify(Number(t));
  return JSON.stringify(t);
}
