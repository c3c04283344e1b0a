/**
 * A `tool_choice` structural tag (grammar.ts) compiled to one xgrammar EBNF,
 * for engines whose grammar engine has no structural tags: web-llm 0.2.79
 * ignores `response_format: {type: "structural_tag"}` without a word, but it
 * takes `{type: "grammar", grammar: <EBNF>}`. Same constraint, other form:
 *
 * - a forced `triggered_tags` (`required` or a named function) → the output is
 *   one of the call tags (and, unless `parallel_tool_calls: false`, more of
 *   them separated by whitespace); nothing before the first call;
 * - `auto` (a `triggered_tags` without `at_least_one`: free text until a
 *   trigger) has no exact EBNF form here and is not compiled: `undefined`,
 *   so the request runs unconstrained (the parser still reads calls);
 * - argument content: JSON Schema → EBNF (types, enum/const, properties in
 *   declared order with optional ones skippable, required ones mandatory,
 *   no undeclared keys, arrays, anyOf/oneOf; anything else: any JSON value);
 *   Qwen3.5's XML parameters; Gemma 4's own EBNF, embedded; a reasoning block
 *   (`any_text` up to its close marker) as text that avoids the marker.
 *
 * JSON inside a call has the canonical separators only (issue 20, item 5).
 * The same JSON compiler serves web-llm 0.2.86 (withCanonicalJson) and
 * `json_schema` output on both versions (jsonSchemaToEbnf).
 *
 * Pure; checked in Node with the web-xgrammar bundled in web-llm 0.2.79 and 0.2.86.
 */
import { GrammarError } from "./ir.js";
import { MAX_CHAIN, MAX_GRAMMAR_CHARS } from "./limits.js";

type Format = Record<string, unknown>;
type Schema = Record<string, unknown>;

class Unsupported extends Error {}

const lit = (text: string): string => JSON.stringify(text);

/** A character for use inside `[...]`. */
function classChar(ch: string): string {
  switch (ch) {
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    case "\\":
    case "]":
    case "-":
      return "\\" + ch;
    // xgrammar rejects `\[` and `\^` in a class: hex escapes.
    case "[":
      return "\\x5b";
    case "^":
      return "\\x5e";
    default:
      return ch;
  }
}

/**
 * JSON in its canonical one-line form (Python's `json.dumps`, what Qwen's
 * and most templates write, and xgrammar's own separators without free
 * whitespace): `", "` between items, `": "` after a key, nothing else. A
 * grammar that lets whitespace sit between tokens lets a weak model fill it
 * until max_tokens (issue 20, item 5); with fixed separators a constrained
 * value always has a next token that makes progress.
 */
const COMMA = '", "';
const COLON = '": "';
const JSON_RULES = [
  'j_value ::= j_object | j_array | j_string | j_number | "true" | "false" | "null"',
  `j_object ::= "{" (j_string ${COLON} j_value (${COMMA} j_string ${COLON} j_value)*)? "}"`,
  `j_array ::= "[" (j_value (${COMMA} j_value)*)? "]"`,
  'j_string ::= "\\"" j_char* "\\""',
  'j_char ::= [^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])',
  'j_integer ::= "-"? ("0" | [1-9] [0-9]*)',
  'j_number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
];

/**
 * Rules are written once and referred to by name: an array's item schema, an
 * object's members (each used by two rules) never appear inline twice, so the
 * grammar grows linearly with the schema (22 nested arrays once made 126 M
 * characters). The total is bounded by MAX_GRAMMAR_CHARS: over it, a
 * GrammarError naming the bound (a 400 for the request).
 */
class Compiler {
  readonly rules: string[] = [];
  private next = 0;
  private size = 0;
  private avoidCache = new Map<string, string>();

  /** Adds one rule line, within the size bound. */
  add(line: string): void {
    this.size += line.length + 1;
    if (this.size > MAX_GRAMMAR_CHARS) throw new GrammarError(`the compiled grammar exceeds the bound of ${MAX_GRAMMAR_CHARS} characters`, "too_large");
    this.rules.push(line);
  }

  /** An expression to be used more than once: itself when it is short, else a rule of its own. */
  named(prefix: string, expr: string): string {
    return expr.length <= 24 ? expr : this.rule(prefix, expr);
  }

  fresh(prefix: string): string {
    return `${prefix}${this.next++}`;
  }

  rule(prefix: string, body: string): string {
    const name = this.fresh(prefix);
    this.add(`${name} ::= ${body}`);
    return name;
  }

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
        const alt = this.rule("calls", (f.tags as Format[]).map((t) => this.tag(t as never)).join(" | "));
        // Calls follow each other directly or on a new line: never a run of whitespace.
        return f.stop_after_first ? alt : `${alt} ("\\n"? ${alt})*`;
      }
      case "tags_with_separator": {
        const alt = this.rule("items", (f.tags as Format[]).map((t) => this.tag(t as never)).join(" | "));
        if (f.stop_after_first) return f.at_least_one ? alt : `${alt}?`;
        const many = `${alt} (${lit(String(f.separator))} ${alt})*`;
        return f.at_least_one ? `(${many})` : `(${many})?`;
      }
      case "json_schema":
        return this.schema(f.json_schema as Schema);
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
  avoid(end: string): string {
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
    const base = this.fresh("avoid");
    const name = (state: number) => `${base}_${state}`;
    for (let state = 0; state < n; state++) {
      const alts: string[] = ['""'];
      const toZero: string[] = [];
      for (const ch of distinct) {
        const to = step(state, ch);
        if (to === n) continue;
        if (to === 0) toZero.push(ch);
        else alts.push(`[${classChar(ch)}] ${name(to)}`);
      }
      alts.push(`[^${distinct.map(classChar).join("")}] ${name(0)}`);
      if (toZero.length > 0) alts.push(`[${toZero.map(classChar).join("")}] ${name(0)}`);
      this.add(`${name(state)} ::= ${alts.join(" | ")}`);
    }
    this.avoidCache.set(end, name(0));
    return name(0);
  }

  schema(schema: Schema | undefined): string {
    if (!schema || typeof schema !== "object") return "j_value";
    if ("const" in schema) return lit(JSON.stringify(schema.const));
    if (Array.isArray(schema.enum)) return "(" + schema.enum.map((v) => lit(JSON.stringify(v))).join(" | ") + ")";
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) return "(" + alternatives.map((s) => this.schema(s)).join(" | ") + ")";
    if (Array.isArray(schema.type)) return "(" + (schema.type as string[]).map((t) => this.schema({ ...schema, type: t })).join(" | ") + ")";
    switch (schema.type) {
      case "string":
        return "j_string";
      case "integer":
        return "j_integer";
      case "number":
        return "j_number";
      case "boolean":
        return '("true" | "false")';
      case "null":
        return '"null"';
      case "array": {
        const item = this.named("item", this.schema(schema.items as Schema | undefined));
        return `("[" (${item} (${COMMA} ${item})*)? "]")`;
      }
      case "object":
        return schema.properties || schema.additionalProperties === false ? this.object(schema) : "j_object";
      default:
        return schema.properties ? this.object(schema) : "j_value";
    }
  }

  /** An object with its properties in declared order; optional ones may be skipped, undeclared ones may not appear. */
  private object(schema: Schema): string {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const keys = Object.keys(properties);
    if (keys.length === 0) return '"{}"';
    const pairs = keys.map((k) => this.named("member", `${lit(JSON.stringify(k))} ${COLON} ${this.schema(properties[k])}`));
    const members = this.ordered(keys, pairs, new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []), COMMA, '""');
    return `("{" ${members} "}")`;
  }

  /**
   * Items in key order, each optional unless required; `sep` between written
   * items, `after` after each. Two rules per key, each naming the next key's
   * rules instead of listing what may follow: O(n) in the number of keys.
   * `first_i`: items i.. with none written yet; `rest_i`: items i.. after one.
   */
  private ordered(keys: string[], items: string[], required: Set<string>, sep: string, after: string): string {
    const n = keys.length;
    if (n > MAX_CHAIN) throw new GrammarError(`an object with ${n} properties, over the bound of ${MAX_CHAIN} properties per object`, "too_large");
    const first = keys.map(() => this.fresh("first"));
    const rest = keys.map(() => this.fresh("rest"));
    const tail = after === '""' ? "" : ` ${after}`;
    for (let i = n - 1; i >= 0; i--) {
      const nextFirst = i + 1 < n ? first[i + 1] : '""';
      const nextRest = i + 1 < n ? rest[i + 1] : '""';
      const take = `${items[i]}${tail}${i + 1 < n ? ` ${nextRest}` : ""}`;
      if (required.has(keys[i])) {
        this.add(`${first[i]} ::= ${take}`);
        this.add(`${rest[i]} ::= ${sep} ${take}`);
      } else {
        this.add(`${first[i]} ::= (${take}) | ${nextFirst}`);
        this.add(`${rest[i]} ::= (${sep} ${take}) | ${nextRest}`);
      }
    }
    return first[0];
  }

  /** Qwen3.5 parameters: `<parameter=k>\nv\n</parameter>` items joined by newlines; values are text up to the close. */
  private xmlParameters(schema: Schema | undefined): string {
    const properties = ((schema?.properties ?? {}) as Record<string, Schema>);
    const keys = Object.keys(properties);
    if (keys.length === 0) return '""';
    const text = this.avoid("\n</parameter>");
    const items = keys.map((k) => this.named("param", `${lit(`<parameter=${k}>\n`)} ${this.xmlValue(properties[k], text)} ${lit("\n</parameter>")}`));
    const required = new Set(Array.isArray(schema?.required) ? (schema!.required as string[]) : []);
    return this.ordered(keys, items, required, '"\\n"', '""');
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
    if (type === "integer" || type === "number" || type === "boolean") return this.schema({ type });
    return text;
  }

  /** Another EBNF (root rule `root`) inside this one: its rule names get a fresh prefix. */
  private embed(grammar: string): string {
    const prefix = this.fresh("g") + "_";
    const lines = grammar.split("\n").filter((l) => l.trim() !== "");
    const names = new Set(lines.map((l) => /^\s*([A-Za-z_][\w-]*)\s*::=/.exec(l)?.[1]).filter((n): n is string => n !== undefined));
    for (const line of lines) this.add(renameRules(line, names, prefix));
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

/** Keywords that only annotate a schema. */
const ANNOTATIONS = new Set(["title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly"]);
/** Keywords the compiler above turns into grammar. */
const COMPILED = new Set(["type", "properties", "required", "enum", "const", "anyOf", "oneOf", "items", "additionalProperties"]);

/**
 * Whether the compiler above expresses a schema exactly as xgrammar's own
 * converter does in strict mode (undeclared properties not allowed), less its
 * free whitespace: only the keywords it compiles (no `$ref`, `pattern`,
 * `minimum`, `minItems`, …), `additionalProperties` only as `false`.
 */
export function compilesExactly(schema: unknown): boolean {
  if (schema === true) return true;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!COMPILED.has(key)) return false;
    if (key === "additionalProperties" && value !== false) return false;
    if (key === "properties" && (typeof value !== "object" || value === null || !Object.values(value).every(compilesExactly))) return false;
    if (key === "items" && !compilesExactly(value)) return false;
    if ((key === "anyOf" || key === "oneOf") && (!Array.isArray(value) || !value.every(compilesExactly))) return false;
  }
  return true;
}

/**
 * Throws a GrammarError when the schema's grammar would be over the size
 * bound, whether or not this compiler expresses it exactly (an inexact one
 * goes to xgrammar's own converter, whose grammar is no smaller).
 */
export function checkSchemaGrammarSize(schema: Record<string, unknown>): void {
  compileJsonSchema(schema);
}

/**
 * The schemas compiled last, by their JSON text: their EBNF where the schema
 * compiles exactly, else null (sized, within the bound). Validation compiles a
 * request's schema to check the size bound, and the engine's request builder
 * takes the EBNF from here: a schema is compiled once per request, not sized
 * in validation and compiled again in the engine. Keyed by the text, so an
 * app that changes a schema object gets it compiled afresh. A few entries
 * suffice (a request's schemas between its validation and its generation).
 */
const compiledSchemas = new Map<string, string | null>();
export const COMPILED_SCHEMAS_KEPT = 32;
let compilations = 0;

/** How many schemas this module compiled so far (what the tests count to show each is compiled once). */
export function jsonSchemaCompilations(): number {
  return compilations;
}

/** Compiles `schema` (a GrammarError when its grammar is over the size bound) or takes it from the last compiled: its EBNF where exact, else null. */
function compileJsonSchema(schema: Record<string, unknown>, text = JSON.stringify(schema)): string | null {
  const kept = compiledSchemas.get(text);
  if (kept !== undefined) {
    // Most recently used last: the oldest goes first.
    compiledSchemas.delete(text);
    compiledSchemas.set(text, kept);
    return kept;
  }
  compilations++;
  const compiler = new Compiler();
  const root = compiler.schema(schema);
  const ebnf = compilesExactly(schema) ? [`root ::= ${root}`, ...compiler.rules, ...JSON_RULES].join("\n") : null;
  compiledSchemas.set(text, ebnf);
  if (compiledSchemas.size > COMPILED_SCHEMAS_KEPT) compiledSchemas.delete(compiledSchemas.keys().next().value!);
  return ebnf;
}

/**
 * A JSON schema as an EBNF (root rule `root`) with the canonical separators,
 * or undefined when the schema uses what this compiler cannot express exactly
 * (then xgrammar's own converter, free whitespace and all, is the better constraint).
 * `text`: the schema's JSON where the caller has it (a normalized `response_format`).
 */
export function jsonSchemaToEbnf(schema: Record<string, unknown>, text?: string): string | undefined {
  if (!compilesExactly(schema)) return undefined;
  return compileJsonSchema(schema, text) ?? undefined;
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
  const compiler = new Compiler();
  try {
    const root = compiler.format(format);
    return [`root ::= ${root}`, ...compiler.rules, ...JSON_RULES].join("\n");
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
