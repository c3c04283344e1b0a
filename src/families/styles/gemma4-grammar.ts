/**
 * A tool's JSON schema as an xgrammar EBNF for Gemma 4 call arguments
 * (`k:<|"|>text<|"|>,n:42,o:{…},a:[…]`, keys bare and in the sorted order the
 * template writes them). Typed where the schema says (string enums, integers,
 * numbers, booleans, arrays, objects with properties, required keys); any
 * other schema admits any value.
 */
type Schema = Record<string, unknown>;

const Q = '"<|\\"|>"';
const GENERIC = [
  'g_value ::= g_string | g_number | "true" | "false" | "null" | g_object | g_array',
  'g_object ::= "{" (g_member ("," g_member)*)? "}"',
  'g_member ::= [a-zA-Z_] [a-zA-Z0-9_]* ":" g_value',
  'g_array ::= "[" (g_value ("," g_value)*)? "]"',
  `g_string ::= ${Q} ([^<] | "<" [^|])* ${Q}`,
  'g_number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
  'g_integer ::= "-"? [0-9]+',
];

const literal = (text: string) => JSON.stringify(text);
const sortKeys = (keys: string[]) => [...keys].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));

/** EBNF (root rule `root`) for the body between `call:NAME{` and `}`. */
export function gemmaArgumentsGrammar(parameters: Schema | undefined): string {
  const rules: string[] = [];
  let next = 0;
  const fresh = () => `r${next++}`;

  function value(schema: Schema | undefined): string {
    if (!schema || typeof schema !== "object") return "g_value";
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) return "(" + alternatives.map(value).join(" | ") + ")";
    if (Array.isArray(schema.type)) return "(" + (schema.type as string[]).map((t) => value({ ...schema, type: t })).join(" | ") + ")";
    if (Array.isArray(schema.enum)) return "(" + schema.enum.map((v) => (typeof v === "string" ? `${Q} ${literal(v)} ${Q}` : literal(JSON.stringify(v)))).join(" | ") + ")";
    switch (schema.type) {
      case "string":
        return "g_string";
      case "integer":
        return "g_integer";
      case "number":
        return "g_number";
      case "boolean":
        return '("true" | "false")';
      case "null":
        return '"null"';
      case "array": {
        const item = value(schema.items as Schema | undefined);
        return `"[" (${item} ("," ${item})*)? "]"`;
      }
      case "object":
        return schema.properties ? `"{" ${members(schema)} "}"` : "g_object";
      default:
        return "g_value";
    }
  }

  /** A rule name for the members of an object schema, keys in template order, optional ones skippable. */
  function members(schema: Schema): string {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const keys = sortKeys(Object.keys(properties));
    if (keys.length === 0) return '""';
    const pairs = keys.map((k) => `${literal(k)} ":" ${value(properties[k])}`);
    // first[i]: members from key i on, none written yet; rest[i]: the same after one was written (so a comma leads).
    const first = keys.map(() => fresh());
    const rest = keys.map(() => fresh());
    const restAt = (i: number) => (i < keys.length ? rest[i] : '""');
    for (let i = keys.length - 1; i >= 0; i--) {
      const firstAlts: string[] = [];
      const restAlts: string[] = [];
      for (let j = i; j < keys.length; j++) {
        firstAlts.push(`(${pairs[j]} ${restAt(j + 1)})`);
        restAlts.push(`("," ${pairs[j]} ${restAt(j + 1)})`);
        if (required.has(keys[j])) break;
      }
      if (keys.slice(i).every((k) => !required.has(k))) {
        firstAlts.push('""');
        restAlts.push('""');
      }
      rules.push(`${first[i]} ::= ${firstAlts.join(" | ")}`, `${rest[i]} ::= ${restAlts.join(" | ")}`);
    }
    return first[0];
  }

  const body = parameters && parameters.properties ? members(parameters) : '(g_member ("," g_member)*)?';
  return [`root ::= ${body}`, ...rules, ...GENERIC].join("\n");
}
