/**
 * The web-xgrammar that web-llm 0.2.79 bundles (the `webllm-0279` alias
 * package): cut out of its bundle, evaluated with `process` hidden (the
 * Emscripten loader's non-Node path, wasm inlined), and used as web-llm 0.2.79
 * uses it for `response_format: {type: "grammar"}`: `compileGrammar(ebnf)`
 * against a toy byte-level vocabulary, text fed token by token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

interface Matcher {
  acceptToken(id: number): boolean;
  isTerminated(): boolean;
  dispose(): void;
}
interface XGrammar079 {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], type: string, prependSpace: boolean, size: number, stop: number[]): Promise<unknown> };
  GrammarCompiler: { createGrammarCompiler(info: unknown): Promise<{ compileGrammar(ebnf: string, root?: string): Promise<{ dispose(): void }> }> };
  GrammarMatcher: { createGrammarMatcher(compiled: unknown): Promise<Matcher> };
}

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

const STOP = 128;
const VOCAB = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), "</s>"];
let compiler: ReturnType<XGrammar079["GrammarCompiler"]["createGrammarCompiler"]> | undefined;

/** An EBNF compiled the way web-llm 0.2.79 compiles `response_format: {type: "grammar"}`; returns whether it accepts a text then stop. */
export async function compileEbnf079(ebnf: string): Promise<(text: string) => Promise<boolean>> {
  const xg = xgrammar079();
  compiler ??= xg.TokenizerInfo.createTokenizerInfo(VOCAB, "raw", false, VOCAB.length, [STOP]).then((info) => xg.GrammarCompiler.createGrammarCompiler(info));
  const compiled = await (await compiler).compileGrammar(ebnf);
  return async (text: string) => {
    const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled);
    try {
      for (const ch of text) {
        const code = ch.charCodeAt(0);
        if (code >= 128) throw new Error(`toy vocabulary is ASCII only: ${JSON.stringify(ch)}`);
        if (!matcher.acceptToken(code)) return false;
      }
      return matcher.acceptToken(STOP) && matcher.isTerminated();
    } finally {
      matcher.dispose();
    }
  };
}
