/**
 * JSON written the way the official templates write it: Jinja's `tojson` is
 * Python's `json.dumps` (`", "` and `": "` separators, non-ASCII kept), with
 * an optional indent. JSON.stringify spaces differently, and a template's
 * exact bytes are what the model was trained on.
 */

/** `json.dumps(value, ensure_ascii=False, indent=indent)`. */
export function pyJson(value: unknown, indent?: number): string {
  return write(value, indent, "");
}

function write(value: unknown, indent: number | undefined, pad: string): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  const inner = indent === undefined ? "" : pad + " ".repeat(indent);
  const open = indent === undefined ? "" : "\n" + inner;
  const sep = indent === undefined ? ", " : ",\n" + inner;
  const close = indent === undefined ? "" : "\n" + pad;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return "[" + open + value.map((v) => write(v, indent, inner)).join(sep) + close + "]";
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return "{}";
  return "{" + open + entries.map(([k, v]) => JSON.stringify(k) + ": " + write(v, indent, inner)).join(sep) + close + "}";
}

/** A call's arguments string as the template writes it: re-dumped when it parses, else as sent. */
export function argumentsText(args: string, indent?: number): string {
  try {
    return pyJson(JSON.parse(args), indent);
  } catch {
    return args;
  }
}

/** A call's arguments as a value (an object for well-formed calls), for formats that are not JSON. */
export function argumentsValue(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return {};
  }
}
