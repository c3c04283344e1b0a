/**
 * How deeply a request may nest. Much of the pipeline walks values
 * recursively (templates render tool-call arguments as objects, compaction
 * serialises the kept turns, schemas become grammars), and a body a few
 * thousand brackets deep overflows the stack there: a 500 from deep inside,
 * after the request took a queue slot. Bodies and the JSON strings they carry
 * (tool-call arguments) are measured here first, without recursion, and
 * refused with a 400 naming where. No real request comes near the bound.
 */
import { ApiError } from "./api-error.js";

/** Levels of objects and arrays a request body, or a JSON string in it, may nest. */
export const MAX_JSON_DEPTH = 128;

function tooDeep(param: string | null, what: string): ApiError {
  return new ApiError({
    status: 400,
    code: "nesting_too_deep",
    param,
    message: `${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, more than any request needs. Flatten it.`,
  });
}

/**
 * Throws a 400 when `value` (a parsed body) nests deeper than MAX_JSON_DEPTH.
 * Iterative: a deep value cannot overflow it. Each object is visited once, so
 * a JS caller's body that shares (or cycles through) objects costs linear time.
 */
export function checkValueDepth(value: unknown, param: string | null = null, what = "The request body"): void {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== "object" || current === null || ArrayBuffer.isView(current) || seen.has(current)) continue;
    seen.add(current);
    if (depth + 1 > MAX_JSON_DEPTH) throw tooDeep(param, what);
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
}

/** Throws a 400 when the JSON text `text` nests deeper than MAX_JSON_DEPTH; brackets inside strings do not count. */
export function checkTextDepth(text: string, param: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) throw tooDeep(param, `\`${param}\``);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}
