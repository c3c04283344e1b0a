/**
 * A `tool_choice` structural tag (families/grammar.ts) compiled to one
 * xgrammar EBNF, for engines whose grammar engine has no structural tags:
 * web-llm 0.2.79 ignores `response_format: {type: "structural_tag"}` without
 * a word, but it takes `{type: "grammar", grammar: <EBNF>}`. Same constraint,
 * other form:
 *
 * - a forced `triggered_tags` (`required` or a named function) → the output is
 *   one of the call tags (and, unless `parallel_tool_calls: false`, more of
 *   them separated by whitespace); nothing before the first call;
 * - `auto` (a `triggered_tags` without `at_least_one`: free text until a
 *   trigger) has no exact EBNF form here and is not compiled: `undefined`,
 *   so the request runs unconstrained (the parser still reads calls);
 * - argument content: JSON Schema → EBNF (json-schema-ebnf.ts); Qwen3.5's
 *   XML parameters; Gemma 4's own EBNF, embedded; a reasoning block
 *   (`any_text` up to its close marker) as text that avoids the marker.
 *
 * JSON inside a call has the canonical separators only (issue 20, item 5).
 * web-llm 0.2.86 keeps its structural tags but takes their JSON contents in
 * that form (withCanonicalJson).
 *
 * Pure; checked in Node with the web-xgrammar bundled in web-llm 0.2.79 and 0.2.86.
 */
import { classChar } from "./ebnf-syntax.js";
import { EbnfRules, lit } from "./ebnf-rules.js";
import { JSON_RULES, JsonSchemaCompiler, jsonSchemaToEbnf } from "./json-schema-ebnf.js";

type Format = Record<string, unknown>;
type Schema = Record<string, unknown>;

/** A format with no EBNF form here: the whole tag is not compiled. */
class Unsupported extends Error {}

class StructuralTagCompiler {
  readonly rules = new EbnfRules();
  private readonly json = new JsonSchemaCompiler(this.rules);
  private avoidCache = new Map<string, string>();

  format(f: Format): string {
    switch (f.type) {
      case "tag":
        return this.tag(f as unknown as { begin: string; content: Format; end: string });
      case "sequence":
        return (f.elements as Format[]).map((e) => this.format(e)).join(" ");
      case "const_string":
        return lit(String(f.value));
      case "triggered_tags": {
        if (!f.at_least_one) throw new Unsupported("free text before a trigger (tool_choice auto)");
        const alt = this.rules.rule("calls", (f.tags as Format[]).map((t) => this.tag(t as never)).join(" | "));
        // Calls follow each other directly or on a new line: never a run of whitespace.
        return f.stop_after_first ? alt : `${alt} ("\\n"? ${alt})*`;
      }
      case "tags_with_separator": {
        const alt = this.rules.rule("items", (f.tags as Format[]).map((t) => this.tag(t as never)).join(" | "));
        if (f.stop_after_first) return f.at_least_one ? alt : `${alt}?`;
        const many = `${alt} (${lit(String(f.separator))} ${alt})*`;
        return f.at_least_one ? `(${many})` : `(${many})?`;
      }
      case "json_schema":
        return this.json.schema(f.json_schema as Schema);
      case "qwen_xml_parameter":
        return this.xmlParameters(f.json_schema as Schema);
      case "grammar":
        return this.embed(String(f.grammar));
      case "regex": {
        const pattern = String(f.pattern);
        // Only a character class with a quantifier, which EBNF writes the same way.
        if (/^\[(?:\\.|[^\]\\])*\][*+?]?$/.test(pattern)) return pattern;
        throw new Unsupported(`regex ${pattern}`);
      }
      case "any_text":
        throw new Unsupported("any_text outside a tag");
      default:
        throw new Unsupported(`format ${String(f.type)}`);
    }
  }

  private tag(t: { begin: string; content: Format; end: string }): string {
    if (t.content.type === "any_text") return `${lit(t.begin)} ${this.avoid(t.end)} ${lit(t.end)}`;
    return `${lit(t.begin)} ${this.format(t.content)} ${lit(t.end)}`;
  }

  /**
   * Any text that does not contain `end` (then `end` follows): the states of
   * a string-matching automaton for `end`, one rule per state; reaching the
   * whole of `end` is the only transition left out.
   */
  private avoid(end: string): string {
    const cached = this.avoidCache.get(end);
    if (cached) return cached;
    const chars = [...end];
    const n = chars.length;
    // KMP failure function over code points.
    const fail = new Array<number>(n).fill(0);
    for (let i = 1, k = 0; i < n; i++) {
      while (k > 0 && chars[i] !== chars[k]) k = fail[k - 1];
      if (chars[i] === chars[k]) k++;
      fail[i] = k;
    }
    const step = (state: number, ch: string): number => {
      let k = state;
      while (k > 0 && chars[k] !== ch) k = fail[k - 1];
      return chars[k] === ch ? k + 1 : 0;
    };
    const distinct = [...new Set(chars)];
    const inClass = (ch: string) => classChar(ch.codePointAt(0)!);
    const base = this.rules.fresh("avoid");
    const name = (state: number) => `${base}_${state}`;
    for (let state = 0; state < n; state++) {
      const alts: string[] = ['""'];
      const toZero: string[] = [];
      for (const ch of distinct) {
        const to = step(state, ch);
        if (to === n) continue;
        if (to === 0) toZero.push(ch);
        else alts.push(`[${inClass(ch)}] ${name(to)}`);
      }
      alts.push(`[^${distinct.map(inClass).join("")}] ${name(0)}`);
      if (toZero.length > 0) alts.push(`[${toZero.map(inClass).join("")}] ${name(0)}`);
      this.rules.add(`${name(state)} ::= ${alts.join(" | ")}`);
    }
    this.avoidCache.set(end, name(0));
    return name(0);
  }

  /** Qwen3.5 parameters: `<parameter=k>\nv\n</parameter>` items joined by newlines; values are text up to the close. */
  private xmlParameters(schema: Schema | undefined): string {
    const properties = (schema?.properties ?? {}) as Record<string, Schema>;
    const keys = Object.keys(properties);
    if (keys.length === 0) return '""';
    const text = this.avoid("\n</parameter>");
    const items = keys.map((k) => this.rules.named("param", `${lit(`<parameter=${k}>\n`)} ${this.xmlValue(properties[k], text)} ${lit("\n</parameter>")}`));
    const required = new Set(Array.isArray(schema?.required) ? (schema!.required as string[]) : []);
    return this.rules.ordered(keys, items, required, '"\\n"', '""');
  }

  /**
   * One XML parameter value: a string enum (written by the Qwen3.5 style as a
   * `^\n?(a|b)\n?$` pattern) → those values; numbers, integers, booleans →
   * their JSON form; anything else → text up to the close tag.
   */
  private xmlValue(schema: Schema | undefined, text: string): string {
    const pattern = typeof schema?.pattern === "string" ? /^\^\\n\?\((.*)\)\\n\?\$$/s.exec(schema.pattern) : null;
    if (pattern) {
      const values = pattern[1].split(/(?<!\\)\|/).map((v) => v.replace(/\\(.)/gs, "$1"));
      return "(" + values.map(lit).join(" | ") + ")";
    }
    const type = schema?.type;
    if (type === "integer" || type === "number" || type === "boolean") return this.json.schema({ type });
    return text;
  }

  /** Another EBNF (root rule `root`) inside this one: its rule names get a fresh prefix. */
  private embed(grammar: string): string {
    const prefix = this.rules.fresh("g") + "_";
    const lines = grammar.split("\n").filter((l) => l.trim() !== "");
    const names = new Set(lines.map((l) => /^\s*([A-Za-z_][\w-]*)\s*::=/.exec(l)?.[1]).filter((n): n is string => n !== undefined));
    for (const line of lines) this.rules.add(renameRules(line, names, prefix));
    return prefix + "root";
  }
}

/** Rule names in one EBNF line, prefixed; text inside strings and character classes is left alone. */
function renameRules(line: string, names: Set<string>, prefix: string): string {
  let out = "";
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '"' || c === "[") {
      const close = c === '"' ? '"' : "]";
      let j = i + 1;
      while (j < line.length && line[j] !== close) j += line[j] === "\\" ? 2 : 1;
      out += line.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const ident = /^[A-Za-z_][\w-]*/.exec(line.slice(i));
    if (ident) {
      out += names.has(ident[0]) ? prefix + ident[0] : ident[0];
      i += ident[0].length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/**
 * A structural tag for web-llm 0.2.86, whose web-xgrammar (0.1.27) lets any
 * amount of whitespace sit between the JSON tokens of a `json_schema` content
 * and has no switch for it: each such content becomes a `grammar` content
 * with the canonical separators where the schema compiles exactly (see
 * jsonSchemaToEbnf). The structure around it (tags, triggers) is unchanged.
 */
export function withCanonicalJson(format: Format): Format {
  if (format.type === "json_schema" && typeof format.json_schema === "object" && format.json_schema !== null) {
    const grammar = jsonSchemaToEbnf(format.json_schema as Schema);
    return grammar === undefined ? format : { type: "grammar", grammar };
  }
  const out: Format = { ...format };
  for (const key of ["format", "content"]) {
    const inner = format[key];
    if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) out[key] = withCanonicalJson(inner as Format);
  }
  for (const key of ["elements", "tags"]) {
    const list = format[key];
    if (Array.isArray(list)) out[key] = list.map((item: Format) => withCanonicalJson(item));
  }
  return out;
}

/**
 * The EBNF (root rule `root`) for a structural tag's format, or undefined
 * when it has no EBNF form here (`auto`, or a format this compiler does not know).
 */
export function structuralTagToEbnf(structuralTag: Record<string, unknown>): string | undefined {
  const format = (structuralTag.format ?? structuralTag) as Format;
  const compiler = new StructuralTagCompiler();
  try {
    const root = compiler.format(format);
    return [`root ::= ${root}`, ...compiler.rules.lines, ...JSON_RULES].join("\n");
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
