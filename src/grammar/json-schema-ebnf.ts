/**
 * A JSON schema compiled to one xgrammar EBNF with the canonical separators:
 * types, enum/const, properties in declared order with optional ones
 * skippable, required ones mandatory, no undeclared keys, arrays,
 * anyOf/oneOf; anything else: any JSON value. Used for `json_schema` output
 * on web-llm 0.2.79 and 0.2.86, for JSON inside tool calls
 * (structural-tag-ebnf.ts), and by validation to size a schema's grammar
 * (each schema compiled once per request: see compileJsonSchema).
 *
 * Pure; checked in Node with the web-xgrammar bundled in web-llm 0.2.79 and 0.2.86.
 */
import { EbnfRules, lit } from "./ebnf-rules.js";

type Schema = Record<string, unknown>;

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
/** The rules the compiled expressions refer to (`j_value`, `j_string`, …): appended once after the grammar's own rules. */
export const JSON_RULES = [
  'j_value ::= j_object | j_array | j_string | j_number | "true" | "false" | "null"',
  `j_object ::= "{" (j_string ${COLON} j_value (${COMMA} j_string ${COLON} j_value)*)? "}"`,
  `j_array ::= "[" (j_value (${COMMA} j_value)*)? "]"`,
  'j_string ::= "\\"" j_char* "\\""',
  'j_char ::= [^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])',
  'j_integer ::= "-"? ("0" | [1-9] [0-9]*)',
  'j_number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
];

/** Writes a schema's rules into `rules` (shared with a structural tag's compiler when the schema sits inside a call). */
export class JsonSchemaCompiler {
  constructor(readonly rules: EbnfRules) {}

  /** The EBNF expression for values of `schema` (its rules added to `rules`). */
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
        const item = this.rules.named("item", this.schema(schema.items as Schema | undefined));
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
    const pairs = keys.map((k) => this.rules.named("member", `${lit(JSON.stringify(k))} ${COLON} ${this.schema(properties[k])}`));
    const members = this.rules.ordered(keys, pairs, new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []), COMMA, '""');
    return `("{" ${members} "}")`;
  }
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
  const rules = new EbnfRules();
  const root = new JsonSchemaCompiler(rules).schema(schema);
  const ebnf = compilesExactly(schema) ? [`root ::= ${root}`, ...rules.lines, ...JSON_RULES].join("\n") : null;
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
