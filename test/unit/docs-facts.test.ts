/**
 * Facts in the README and docs/ that would otherwise go stale: the README's
 * shape (short, tool-call code early), every createClient option documented
 * in docs/api.md, every relative link resolving, and the package sizes the
 * bundler guide states agreeing with what `npm pack` produces now.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { packLibrary, repo } from "../installed/harness.js";

const readme = readFileSync(join(repo, "README.md"), "utf8");
const apiDoc = readFileSync(join(repo, "docs/api.md"), "utf8");

/** The property names of an exported interface in a source file, read with the TypeScript parser. */
function interfaceKeys(file: string, name: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(repo, file), "utf8"), ts.ScriptTarget.Latest, true);
  const keys: string[] = [];
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === name) {
      for (const member of node.members) if (member.name && ts.isIdentifier(member.name)) keys.push(member.name.text);
    }
  });
  return keys;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(dir, f));
}

describe("the README", () => {
  it("stays a first-hour read: under 320 lines, the first tool-call code before line 150", () => {
    const lines = readme.split("\n");
    expect(lines.length).toBeLessThan(320);
    const toolSnippet = lines.findIndex((line) => line.includes("readme-snippet: tool-call"));
    expect(toolSnippet).toBeGreaterThan(0);
    expect(toolSnippet + 1).toBeLessThan(150);
    expect(lines.slice(toolSnippet, toolSnippet + 20).join("\n")).toContain("tool_calls");
  });

  it("keeps its two commands: set up and run the demo, set up and pass the tests", () => {
    expect(readme).toContain("npm install && npm run demo");
    expect(readme).toContain("npm ci && npm test");
  });
});

describe("docs/api.md", () => {
  it("lists every createClient option with a default", () => {
    const keys = interfaceKeys("src/client/types.ts", "ClientOptions");
    expect(keys.length).toBeGreaterThan(5);
    // The createClient table comes first: a later table's row of the same name (client.stats()'s `batching`) is not it.
    const rows = new Map<string, string[]>();
    for (const line of apiDoc.split("\n").filter((l) => l.startsWith("| `"))) {
      const name = /^\| `([^`]+)`/.exec(line)![1]!;
      if (!rows.has(name)) rows.set(name, line.split(" | "));
    }
    for (const key of keys) {
      expect(rows.has(key), `docs/api.md has no row for the createClient option \`${key}\``).toBe(true);
      // option | type | default | description: the default column is filled
      expect(rows.get(key)![2]?.trim(), `the \`${key}\` row states a default`).toBeTruthy();
    }
  });
});

describe("links", () => {
  it("every relative link in README.md, CONTRIBUTING.md and docs/ resolves to a file or folder of the repository", () => {
    const files = [join(repo, "README.md"), join(repo, "CONTRIBUTING.md"), ...markdownFiles(join(repo, "docs"))];
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith("#")) continue;
        const path = resolve(dirname(file), target!.split("#")[0]!);
        if (!existsSync(path)) broken.push(`${file.slice(repo.length + 1)} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe("package sizes stated in docs/bundlers.md", { timeout: 300_000 }, () => {
  it("agree within 20 % with the packed tarball and the built worker", () => {
    const doc = readFileSync(join(repo, "docs/bundlers.md"), "utf8").replace(/\s+/g, " ");
    const stated = /about (\d+) kB packed, ([\d.]+) MB unpacked\*\*; the worker file .*? is \*\*about (\d+) kB\*\*/.exec(doc);
    expect(stated, "docs/bundlers.md states the packed, unpacked and worker sizes").not.toBeNull();
    const dir = mkdtempSync(join(tmpdir(), "webgpu-openai-sizes-"));
    try {
      const pack = packLibrary(dir);
      const worker = statSync(join(repo, "dist/worker/entry.js")).size;
      const within = (measured: number, claimed: number) => Math.abs(measured - claimed) / claimed <= 0.2;
      const report = `measured: ${(pack.packedBytes / 1e3).toFixed(0)} kB packed, ${(pack.unpackedBytes / 1e6).toFixed(2)} MB unpacked, worker ${(worker / 1e3).toFixed(0)} kB`;
      console.log(`docs sizes ${report}`);
      expect(within(pack.packedBytes, Number(stated![1]) * 1e3), report).toBe(true);
      expect(within(pack.unpackedBytes, Number(stated![2]) * 1e6), report).toBe(true);
      expect(within(worker, Number(stated![3]) * 1e3), report).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/models.md", () => {
  it("states the GPU memory of each listed model as web-llm's catalog records do", async () => {
    const { prebuiltAppConfig } = await import("@mlc-ai/web-llm");
    const doc = readFileSync(join(repo, "docs/models.md"), "utf8");
    const rows = [...doc.matchAll(/^\| `([^`]+)` \| (\d+) MB \| (\d+) MB \|/gm)];
    expect(rows.length).toBeGreaterThan(3);
    for (const [, alias, f16, f32] of rows) {
      const mb = (quant: string) => prebuiltAppConfig.model_list.find((r) => r.model_id === `${alias}-${quant}-MLC`)?.vram_required_MB;
      expect(Math.round(mb("q4f16_1") ?? -1), `${alias} q4f16_1`).toBe(Number(f16));
      expect(Math.round(mb("q4f32_1") ?? -1), `${alias} q4f32_1`).toBe(Number(f32));
    }
  });
});
