/**
 * The web-xgrammar that web-llm 0.2.86 bundles (it is not exported): its
 * module is cut out of web-llm's bundle and evaluated with `process` hidden so
 * that the Emscripten loader takes its non-Node path (the wasm is inlined as a
 * data URI). Grammars are then compiled against a toy byte-level vocabulary
 * (one token per ASCII character, plus a stop token; see xgrammar-toy.ts), the
 * way web-llm compiles a `response_format` for a model's tokenizer, and text is
 * fed token by token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { toyCompile, type ToyXGrammar } from "./xgrammar-toy.js";

type XGrammar = ToyXGrammar<{ compileStructuralTag(tag: unknown): Promise<{ dispose(): void }>; compileGrammar(ebnf: string): Promise<{ dispose(): void }> }>;

let loaded: XGrammar | undefined;

/** The bundled web-xgrammar module. */
export function xgrammar(): XGrammar {
  if (loaded) return loaded;
  const bundle = readFileSync(createRequire(import.meta.url).resolve("@mlc-ai/web-llm"), "utf8");
  const start = bundle.indexOf("var lib$3 = {exports: {}};");
  const end = bundle.indexOf("var libExports$1 = requireLib$1();");
  if (start < 0 || end < start) throw new Error("web-xgrammar not found in the web-llm bundle: the bundle layout changed");
  loaded = new Function("process", bundle.slice(start, end) + "\nreturn requireLib$1();")(undefined) as XGrammar;
  return loaded;
}

/** A structural tag compiled the way web-llm compiles `response_format: {type: "structural_tag"}`. */
export const compileTag = toyCompile(xgrammar, (compiler, tag: unknown) => compiler.compileStructuralTag(tag));

/** An EBNF compiled the way web-llm 0.2.86 compiles `response_format: {type: "grammar"}`. */
export const compileEbnf086 = toyCompile(xgrammar, (compiler, ebnf: string) => compiler.compileGrammar(ebnf));
