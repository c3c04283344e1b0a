/**
 * The web-xgrammar that web-llm 0.2.79 bundles (the `webllm-0279` alias
 * package): cut out of its bundle, evaluated with `process` hidden (the
 * Emscripten loader's non-Node path, wasm inlined), and used as web-llm 0.2.79
 * uses it for `response_format: {type: "grammar"}`: `compileGrammar(ebnf)`
 * against a toy byte-level vocabulary (xgrammar-toy.ts), text fed token by token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { toyCompile, type ToyXGrammar } from "./xgrammar-toy.js";

type XGrammar079 = ToyXGrammar<{ compileGrammar(ebnf: string, root?: string): Promise<{ dispose(): void }> }>;

let loaded: XGrammar079 | undefined;

export function xgrammar079(): XGrammar079 {
  if (loaded) return loaded;
  const bundle = readFileSync(createRequire(import.meta.url).resolve("webllm-0279"), "utf8");
  const start = bundle.indexOf("var lib$1 = {exports: {}};");
  const endMarker = "}(lib$1, lib$1.exports));";
  const end = bundle.indexOf(endMarker, start);
  if (start < 0 || end < start) throw new Error("web-xgrammar not found in the web-llm 0.2.79 bundle: the bundle layout changed");
  const source = "var commonjsGlobal = globalThis;\n" + bundle.slice(start, end + endMarker.length) + "\nreturn lib$1.exports;";
  loaded = new Function("process", source)(undefined) as XGrammar079;
  return loaded;
}

/** An EBNF compiled the way web-llm 0.2.79 compiles `response_format: {type: "grammar"}`; returns whether it accepts a text then stop. */
export const compileEbnf079 = toyCompile(xgrammar079, (compiler, ebnf: string) => compiler.compileGrammar(ebnf));
