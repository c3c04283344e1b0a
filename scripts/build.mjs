/**
 * Builds the published dist/ (`npm run build`):
 *
 * 1. tsc emits every module of src/ as plain ESM (one .js + .d.ts per file, no
 *    source maps), so `new Worker(new URL("../worker/entry.js", import.meta.url))`
 *    in client/ stays literal and relative to the file that contains it: the
 *    pattern Vite, webpack and a browser understand unchanged. Dependencies stay
 *    bare imports, resolved (and deduplicated) by the app's bundler.
 * 2. Each worker entry (src/worker/entry.ts, src/worker/*-entry.ts) is then
 *    replaced by one self-contained file: a module worker gets no import map, so
 *    in a page without a bundler its bare `comlink`/`idb-keyval` imports could not
 *    resolve. Those two are small and inlined; `@mlc-ai/web-llm` stays an
 *    external dynamic import, loaded only when a web-llm model is used, and so
 *    does `@modelcontextprotocol/sdk`, loaded only when an MCP server is used,
 *    `@wllama/wllama`, loaded only when a GGUF model is used, and
 *    `@huggingface/jinja`, loaded only when a GGUF's own chat template is rendered.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit", cwd: root });

const workerEntries = readdirSync(join(root, "src/worker")).filter((name) => /^(?:.+-)?entry\.ts$/.test(name));
for (const name of workerEntries) {
  await build({
    entryPoints: [join(root, "src/worker", name)],
    outfile: join(dist, "worker", name.replace(/\.ts$/, ".js")),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    external: ["@mlc-ai/web-llm", "@wllama/wllama", "@wllama/wllama/*", "@huggingface/jinja", "@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*"],
    allowOverwrite: true,
    legalComments: "inline",
    logLevel: "warning",
  });
}
console.log(`dist/ built; worker entries: ${workerEntries.join(", ")}`);
