/**
 * The README's way in, as a newcomer follows it: the package installed into a
 * fresh app from the repository's git URL (npm clones it and builds dist/ with
 * the `prepare` script) and from a packed tarball, then the README's own code
 * snippets — quick start, the OpenAI SDK, the tool-call loop, testing without a
 * GPU — extracted from README.md (not copied) and run unchanged in Node
 * (TypeScript snippets with their types stripped, as the app's bundler would).
 * In the tarball's app, every ```ts snippet of the README is also type-checked
 * with strict tsc, with a streamed tool-call accumulator written against 0.1's
 * types (`tc.function.name`, no check that `function` is there), and so is
 * every ```ts snippet of docs/ (fragments: the names they take from the app
 * around them, `client`, `model`, …, are declared once in DOCS_CONTEXT).
 *
 * Node has no GPU: a module hook resolves the snippets' `webgpu-openai` import
 * to a thin module that gives `createClient` a scripted engine when the
 * snippet passes none (a reply for each kind of request), and re-exports the
 * installed package's everything else.
 *
 * The git install runs the repository's committed HEAD: uncommitted changes are
 * not in it. It installs the dev dependencies to build (from the npm cache).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packLibrary, repo } from "../installed/harness.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The README's code blocks marked `<!-- readme-snippet: name -->`, by name. */
function readmeSnippets(): Map<string, string> {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  return new Map([...readme.matchAll(/<!-- readme-snippet: ([\w-]+) -->\n```(?:ts|js)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));
}

/** Every ```ts code block of the README, marked or not, in order. */
function readmeTypeScriptBlocks(): string[] {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/**
 * Every ```ts code block under docs/ an app could copy, by page and index.
 * docs/internals/ is left out: its blocks quote the library's own source
 * (src/, which tsc checks as it is), not code written against the package.
 */
function docsTypeScriptBlocks(): Array<{ name: string; code: string }> {
  const pages = readdirSync(join(repo, "docs"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".md") && !f.startsWith("internals"));
  return pages.flatMap((page) =>
    [...readFileSync(join(repo, "docs", page), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({ name: `${page.replace(/\.md$/, "").replace(/\W/g, "-")}-${i}`, code: m[1]! })),
  );
}

/**
 * What the docs' fragments take from the app around them (a client, a model
 * id, the app's own functions), one meaning per name across the pages.
 */
const DOCS_CONTEXT = `
declare const client: import("webgpu-openai").Client;
declare const openai: import("openai").OpenAI;
declare const model: string;
declare const messages: import("webgpu-openai").ChatCompletionMessageParam[];
declare const input: string;
declare const id: string;
declare const file: File;
declare const fileText: string;
declare const editedFile: string;
declare const float32Samples: Float32Array;
declare const getWeather: import("@openai/agents").Tool;
declare const weather: import("ai").Tool;
declare const createClient: typeof import("webgpu-openai").createClient;
declare const createScriptedEngine: typeof import("webgpu-openai/testing").createScriptedEngine;
declare type InputAudioPart = import("webgpu-openai").InputAudioPart;
declare function render(event: unknown): void;
declare function show(text: string): void;
declare function showBanner(text: string): void;
declare function expect(value: unknown): { toBeLessThan(bound: number): void };
`;

/** Strict tsc on `files` in `cwd`: its error lines, and the files it read. */
function strictTsc(cwd: string, files: string[]): { errors: string[]; read: string } {
  const tsc = join(repo, "node_modules/typescript/bin/tsc");
  const args = ["--noEmit", "--strict", "--skipLibCheck", "--pretty", "false", "--listFiles", "--target", "es2022", "--lib", "es2022,dom", "--module", "esnext", "--moduleResolution", "bundler"];
  let out = "";
  try {
    out = execFileSync(process.execPath, [tsc, ...args, ...files], { cwd, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    out = String((error as { stdout?: string }).stdout ?? error);
  }
  return { errors: out.split("\n").filter((line) => line.includes("error TS")), read: out.replaceAll("\\", "/") };
}

/** What a bundler does to a TypeScript snippet before it runs: the types removed, nothing else. */
function asJavaScript(code: string): string {
  return ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText;
}

/**
 * App code as 0.1's types allowed it: a streamed tool-call accumulator for a
 * request with function tools only, reading `tc.function` unchecked. A request
 * with a custom tool may get custom calls, so there `function` must be checked
 * (the `@ts-expect-error` line: tsc fails if that error is gone).
 */
const ACCUMULATOR_0_1 = `
import { createClient, type ChatCompletionTool } from "webgpu-openai";

const client = createClient();

export async function accumulate(): Promise<Array<{ id: string; name: string; arguments: string }>> {
  const stream = await client.chat.completions.create({
    model: "Qwen3-0.6B",
    messages: [{ role: "user", content: "What's the weather in Paris?" }],
    tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
    stream: true,
  });
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[tc.index] ??= { id: "", name: "", arguments: "" });
      if (tc.id) call.id = tc.id;
      if (tc.function.name) call.name = tc.function.name;
      call.arguments += tc.function.arguments;
    }
  }
  return calls;
}

export async function answered(): Promise<string[]> {
  const reply = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "Hi" }] });
  return (reply.choices[0]?.message.tool_calls ?? []).map((call) => call.function.name + call.function.arguments);
}

export async function withCustomTools(tools: ChatCompletionTool[]): Promise<string[]> {
  const reply = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "Hi" }], tools });
  // @ts-expect-error a custom tool's call has no function
  return (reply.choices[0]?.message.tool_calls ?? []).map((call) => call.function.name);
}
`;

const GREETING = "Bonjour !";
const ANSWER = "It is 18 °C and cloudy in Paris.";

/** The snippets' `webgpu-openai`, with a scripted engine standing in for the GPU. */
const SHIM = `
import * as real from "webgpu-openai/real";
import { createScriptedEngine } from "webgpu-openai/testing";
export * from "webgpu-openai/real";
const reply = (request) => {
  const last = request.messages.at(-1);
  if (last?.role === "tool" || JSON.stringify(last?.content ?? "").includes("tool_response")) return ${JSON.stringify(ANSWER)};
  if (JSON.stringify(request.messages).includes("get_weather")) return '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>';
  return ${JSON.stringify(GREETING)};
};
export function createClient(options = {}) {
  return real.createClient(options.engine ? options : { ...options, engine: createScriptedEngine({ replies: reply }) });
}
`;

/** A module-resolution hook: `webgpu-openai` → the shim; `webgpu-openai/real` → the installed package. */
const HOOKS = `
export async function resolve(specifier, context, next) {
  if (specifier === "webgpu-openai") return { url: new URL("./shim.mjs", import.meta.url).href, shortCircuit: true };
  if (specifier === "webgpu-openai/real") return next("webgpu-openai", context);
  return next(specifier, context);
}
`;

function freshApp(dependency: string): string {
  const app = mkdtempSync(join(tmpdir(), "webgpu-openai-readme-"));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "readme-app", private: true, type: "module" }));
  const openai = (JSON.parse(readFileSync(join(repo, "node_modules/openai/package.json"), "utf8")) as { version: string }).version;
  execFileSync(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-package-lock", dependency, `openai@${openai}`], { cwd: app, stdio: "pipe", timeout: 600_000 });
  writeFileSync(join(app, "shim.mjs"), SHIM);
  writeFileSync(join(app, "hooks.mjs"), HOOKS);
  writeFileSync(join(app, "register.mjs"), `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`);
  return app;
}

/** Runs one README snippet, unchanged, as a module of the app; returns what it printed. */
function runSnippet(app: string, name: string): string {
  const code = readmeSnippets().get(name);
  if (!code) throw new Error(`README.md has no snippet marked readme-snippet: ${name}`);
  writeFileSync(join(app, `${name}.mjs`), asJavaScript(code));
  return execFileSync(process.execPath, ["--import", pathToFileURL(join(app, "register.mjs")).href, `${name}.mjs`], {
    cwd: app,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
}

function expectSnippetsRun(app: string): void {
  expect(runSnippet(app, "quick-start")).toContain(GREETING);
  expect(runSnippet(app, "openai-sdk").replace(/\n/g, "")).toContain(GREETING);
  expect(runSnippet(app, "tool-call").trim()).toBe(ANSWER);
  const testing = runSnippet(app, "testing");
  expect(testing).toContain("content: 'Hello!'");
  expect(testing).toContain("reasoning_content: 'The user greets me.'");
}

describe("the README's install and snippets, in a fresh app", { timeout: 900_000 }, () => {
  const cleanup: string[] = [];
  afterAll(() => {
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it("names the snippets this test runs", () => {
    expect([...readmeSnippets().keys()]).toEqual(["quick-start", "openai-sdk", "tool-call", "testing"]);
  });

  describe("installed from a tarball (npm pack)", () => {
    let app: string;
    beforeAll(() => {
      const packDir = mkdtempSync(join(tmpdir(), "webgpu-openai-pack-"));
      cleanup.push(packDir);
      app = freshApp(packLibrary(packDir).tarball);
      cleanup.push(app);
    }, 600_000);
    it("runs the quick start, the OpenAI SDK, the tool-call loop and the testing snippets unchanged", () => expectSnippetsRun(app));

    it("type-checks every ```ts snippet of the README and a 0.1-style streamed tool-call accumulator (strict tsc)", () => {
      const files = readmeTypeScriptBlocks().map((code, i) => {
        writeFileSync(join(app, `readme-${i}.ts`), code);
        return `readme-${i}.ts`;
      });
      expect(files.length).toBeGreaterThanOrEqual(5);
      writeFileSync(join(app, "accumulator-0.1.ts"), ACCUMULATOR_0_1);
      // The Vite-config snippet imports vite, which an app that uses Vite has: this repository's.
      symlinkSync(join(repo, "node_modules/vite"), join(app, "node_modules/vite"), "dir");
      const { errors, read } = strictTsc(app, [...files, "accumulator-0.1.ts"]);
      expect(errors, read).toEqual([]);
      // Not vacuous: the package's own declarations, installed from the tarball, were the ones checked against.
      expect(read).toContain("node_modules/webgpu-openai/dist/index.d.ts");
    });

    it("type-checks every ```ts snippet of docs/ (strict tsc)", () => {
      // A folder of the app whose node_modules adds the SDKs the docs use (this repository's), with the
      // openai the Agents SDK takes (`setDefaultOpenAIClient` wants that version's client).
      const dir = join(app, "docs-check");
      const sdks = ["@openai/agents", "ai", "@ai-sdk/openai", "@ai-sdk/openai-compatible", "@langchain/openai"];
      for (const sdk of sdks) {
        mkdirSync(dirname(join(dir, "node_modules", sdk)), { recursive: true });
        symlinkSync(join(repo, "node_modules", sdk), join(dir, "node_modules", sdk), "dir");
      }
      const lookup = createRequire(join(repo, "node_modules/@openai/agents-openai/package.json")).resolve.paths("openai") ?? [];
      const agentsOpenAi = lookup.map((folder) => join(folder, "openai")).find((folder) => existsSync(join(folder, "package.json")))!;
      symlinkSync(agentsOpenAi, join(dir, "node_modules/openai"), "dir");
      writeFileSync(join(dir, "context.d.ts"), DOCS_CONTEXT);
      const snippets = docsTypeScriptBlocks();
      expect(snippets.length).toBeGreaterThanOrEqual(20);
      // `export {}`: each snippet is a module of its own, so snippets' names do not collide.
      for (const { name, code } of snippets) writeFileSync(join(dir, `${name}.ts`), `export {};\n${code}`);
      const { errors, read } = strictTsc(dir, ["context.d.ts", ...snippets.map(({ name }) => `${name}.ts`)]);
      expect(errors, read).toEqual([]);
      expect(read).toContain("node_modules/webgpu-openai/dist/index.d.ts");
    });
  });

  describe("installed from the repository's git URL (prepare builds dist/)", () => {
    let app: string;
    beforeAll(() => {
      app = freshApp(`git+${pathToFileURL(repo).href}`);
      cleanup.push(app);
    }, 900_000);
    it("has a built dist/ and runs the same snippets", () => {
      expect(readFileSync(join(app, "node_modules/webgpu-openai/dist/index.d.ts"), "utf8")).toContain("createClient");
      expectSnippetsRun(app);
    });
  });
});
