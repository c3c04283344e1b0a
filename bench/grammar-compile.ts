/**
 * Grammar compile time and memory on the issue-36 fixtures (regex nested
 * optionals, Lark nested `*` with `%ignore`, a 50 KB bounded repetition):
 * time and RSS growth of appGrammarEbnf, each fixture in a fresh process so
 * RSS growth is its own. Usage:
 *   npx esbuild bench/grammar-compile.ts --bundle --platform=node --format=esm --outfile=/tmp/grammar-compile.mjs
 *   node /tmp/grammar-compile.mjs            # every fixture, one child process each
 *   node /tmp/grammar-compile.mjs <name>     # one fixture
 */
import { execFileSync } from "node:child_process";
import { appGrammarEbnf, type AppGrammar } from "../src/protocol/app-grammar.js";

export function nestedRegex(n: number): string {
  let s = "a?";
  for (let i = 0; i < n; i++) s = "(?:b?" + s + ")?";
  return s;
}

export function nestedLark(depth: number): string {
  let s = '"a"';
  for (let i = 0; i < depth; i++) s = `(${s})*`;
  return `start: ${s}\n%import common.WS\n%ignore WS\n`;
}

const FIXTURES: Record<string, AppGrammar> = {
  "regex N=20": { syntax: "regex", definition: nestedRegex(20) },
  "regex N=22": { syntax: "regex", definition: nestedRegex(22) },
  "regex N=30": { syntax: "regex", definition: nestedRegex(30) },
  "lark depth 10": { syntax: "lark", definition: nestedLark(10) },
  "lark depth 12": { syntax: "lark", definition: nestedLark(12) },
  "lark depth 20": { syntax: "lark", definition: nestedLark(20) },
  "a{0,1000} x 50 KB": { syntax: "regex", definition: "a{0,1000}".repeat(Math.floor(50_000 / 9)) },
  "regex nested 100 x 70": { syntax: "regex", definition: nestedRegex(100).repeat(70) },
  "lark 150 rules nested 100": {
    syntax: "lark",
    definition:
      Array.from({ length: 150 }, (_, i) => `${i === 0 ? "start" : `r${i}`}: ${nestedLark(100).split("\n")[0].slice("start: ".length)}${i + 1 < 150 ? ` r${i + 1}` : ""}`).join("\n") +
      "\n%import common.WS\n%ignore WS\n",
  },
  "a{0,1000}a{0,999}… 50 KB": {
    syntax: "regex",
    definition: Array.from({ length: 6_400 }, (_, i) => `a{0,${1000 - (i % 1000)}}`)
      .join("")
      .slice(0, 50_000)
      .replace(/a\{[^}]*$/, ""),
  },
};

function one(name: string): void {
  const grammar = FIXTURES[name];
  // Peak RSS (maxRSS, KiB) before and after: the compile is synchronous, nothing can sample during it.
  const peak0 = process.resourceUsage().maxRSS;
  const start = performance.now();
  let outcome: string;
  try {
    outcome = `ok, ${appGrammarEbnf(grammar, "response_format").length} chars of EBNF`;
  } catch (error) {
    outcome = `refused: ${(error as { code?: string }).code ?? ""} ${(error as Error).message.slice(0, 140)}`;
  }
  const ms = performance.now() - start;
  const growth = (process.resourceUsage().maxRSS - peak0) / 1024;
  console.log(`${name.padEnd(24)} ${String(grammar.definition.length).padStart(6)} chars  ${ms.toFixed(1).padStart(9)} ms  peak RSS +${growth.toFixed(1)} MB  ${outcome}`);
}

const which = process.argv[1]?.includes("grammar-compile") ? process.argv[2] : "none";
if (which === "none") {
  // imported
} else if (which) one(which);
else {
  for (const name of Object.keys(FIXTURES)) {
    try {
      process.stdout.write(execFileSync(process.execPath, [process.argv[1], name], { timeout: Number(process.env.LIMIT_MS ?? 60_000), encoding: "utf8" }));
    } catch {
      console.log(`${name.padEnd(20)} past ${Number(process.env.LIMIT_MS ?? 60_000) / 1000} s (killed)`);
    }
  }
}
