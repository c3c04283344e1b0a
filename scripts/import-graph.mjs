#!/usr/bin/env node
/**
 * The import graph of src/, measured the way issue 39 ("imports that run one
 * way") counts it. Usage: `node scripts/import-graph.mjs [--verbose] [--subfolders] [--src DIR]`.
 *
 * Every file-to-file import counts: `import`, `import type`, `export ... from`,
 * `import()` and `typeof import(...)` (ts.preProcessFile finds them all).
 *
 * - Circles: strongly connected components of the file graph with more than
 *   one file.
 * - Folders: a file's folder is its top-level directory under src/;
 *   engine/prompt-cache counts as engine. With --subfolders every directory
 *   is a folder of its own. Each file at the top of src/ is its own node.
 * - Arrows back up: a folder edge A -> B (some file in A imports some file in
 *   B) where B also depends on A, directly or through other folders, so the
 *   two cannot be layered. Of each such folder circle, the arrows that run
 *   against the majority are the ones "back up": for a pair A <-> B, the
 *   direction with fewer file imports (ties: both). Folder edges inside a
 *   longer folder circle with no direct pair are listed as such.
 *   Also printed: every folder edge, with its file-import count.
 */
import ts from "typescript";
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, dirname, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const srcArg = process.argv.indexOf("--src");
const src = srcArg > 0 ? resolve(process.argv[srcArg + 1]) : join(root, "src");
const verbose = process.argv.includes("--verbose");
const subfolders = process.argv.includes("--subfolders");

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function resolveImport(from, spec) {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  const candidates = [base.replace(/\.js$/, ".ts"), base + ".ts", join(base, "index.ts"), base];
  for (const c of candidates) if (c.endsWith(".ts") && existsSync(c)) return c;
  return null;
}

const files = walk(src).sort();
/** file (relative to src) -> set of files it imports */
const graph = new Map();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets = new Set();
  for (const ref of info.importedFiles) {
    const target = resolveImport(file, ref.fileName);
    if (target && target !== file) targets.add(relative(src, target));
  }
  graph.set(relative(src, file), targets);
}

// Tarjan's strongly connected components.
function scc(nodes, edges) {
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], out = [];
  function visit(v) {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      out.push(comp.sort());
    }
  }
  for (const v of nodes) if (!idx.has(v)) visit(v);
  return out;
}

const circles = scc([...graph.keys()], graph).filter((c) => c.length > 1).sort((a, b) => b.length - a.length);

/**
 * A file's top-level folder under src/, or its own directory with
 * --subfolders. A file at the top of src/ is a node of its own: the entries
 * (index.ts, static.ts) sit above everything, lazy-imports.ts and version.ts
 * below everything, so one "." folder would make every arrow to them look
 * like a climb back up.
 */
const folderOf = (file) => (!file.includes("/") ? file : subfolders ? dirname(file) : file.split("/")[0]);
/** "A -> B" -> list of "file -> file" */
const folderEdges = new Map();
for (const [from, targets] of graph) {
  for (const to of targets) {
    const a = folderOf(from), b = folderOf(to);
    if (a === b) continue;
    const key = `${a} -> ${b}`;
    if (!folderEdges.has(key)) folderEdges.set(key, []);
    folderEdges.get(key).push(`${from} -> ${to}`);
  }
}
const folderGraph = new Map();
for (const key of folderEdges.keys()) {
  const [a, b] = key.split(" -> ");
  if (!folderGraph.has(a)) folderGraph.set(a, new Set());
  folderGraph.get(a).add(b);
}
const folders = [...new Set([...graph.keys()].map(folderOf))].sort();
const folderCircles = scc(folders, folderGraph).filter((c) => c.length > 1);
const componentOf = new Map();
folderCircles.forEach((c, i) => c.forEach((f) => componentOf.set(f, i)));

const backArrows = [];
const unpairedCircleEdges = [];
for (const [key, imports] of folderEdges) {
  const [a, b] = key.split(" -> ");
  if (componentOf.get(a) === undefined || componentOf.get(a) !== componentOf.get(b)) continue;
  const reverse = folderEdges.get(`${b} -> ${a}`);
  if (!reverse) unpairedCircleEdges.push(`${key} (${imports.length})`);
  else if (imports.length <= reverse.length) backArrows.push({ key, imports });
}

console.log(`files: ${files.length}`);
console.log(`import circles (strongly connected components > 1 file): ${circles.length}`);
for (const c of circles) console.log(`  [${c.length}] ${c.join(", ")}`);
console.log(`folder circles: ${folderCircles.length}`);
for (const c of folderCircles) console.log(`  [${c.length}] ${c.join(", ")}`);
console.log(`arrows back up (folder pairs importing each other; the lighter direction): ${backArrows.length}`);
for (const { key, imports } of backArrows.sort((x, y) => x.key.localeCompare(y.key))) {
  console.log(`  ${key} (${imports.length} file imports)`);
  for (const i of imports) console.log(`      ${i}`);
}
console.log(`folder edges inside a folder circle without a direct reverse edge: ${unpairedCircleEdges.length}`);
if (verbose) for (const e of unpairedCircleEdges.sort()) console.log(`  ${e}`);
console.log(`folder edges: ${folderEdges.size}`);
if (verbose) {
  for (const key of [...folderEdges.keys()].sort()) console.log(`  ${key} (${folderEdges.get(key).length})`);
}
