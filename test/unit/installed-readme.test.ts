/**
 * The README's way in, as a newcomer follows it: the package installed into a
 * fresh app from the repository's git URL (npm clones it and builds dist/ with
 * the `prepare` script) and from a packed tarball, then the README's own code
 * snippets — quick start, the OpenAI SDK, the tool-call loop, testing without a
 * GPU — extracted from README.md (not copied) and run unchanged in Node.
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
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packLibrary, repo } from "../installed/harness.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The README's code blocks marked `<!-- readme-snippet: name -->`, by name. */
function readmeSnippets(): Map<string, string> {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  return new Map([...readme.matchAll(/<!-- readme-snippet: ([\w-]+) -->\n```(?:ts|js)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));
}

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
  writeFileSync(join(app, `${name}.mjs`), code);
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
