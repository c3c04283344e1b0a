#!/usr/bin/env node
/**
 * The rooms one streamed chat request enters (issue 39, "walks"): the files of
 * the built library (and their top folders) whose functions run while a warm
 * streamed chat request goes from the client to the engine and back, in this
 * thread (`worker: false`) on a scripted catalog record. Measured with V8's
 * precise coverage (call counts), so it counts what runs, not what is imported.
 *
 * Usage: `npm run build && node scripts/request-rooms.mjs [DIST] [--list]`
 * (DIST defaults to dist/; a tsc output of another commit's src/ works too).
 */
import { Session } from "node:inspector/promises";
import { pathToFileURL } from "node:url";
import { dirname, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const dist = resolve(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? resolve(root, "dist"));
const { createClient } = await import(pathToFileURL(resolve(dist, "index.js")).href);

const record = {
  model: "https://models.invalid/Qwen3-Scripted-MLC",
  model_id: "Qwen3-Scripted-q4f32_1-MLC",
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  engine: { kind: "scripted", replies: ["Hello there, friend."] },
};
const client = createClient({ worker: false, models: [record] });

async function streamedRequest() {
  const stream = await client.chat.completions.create({ model: record.model_id, messages: [{ role: "user", content: "hi" }], stream: true });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
// Two warm-ups (model load, lazy imports, first-use caches), then the counts are reset.
await streamedRequest();
await streamedRequest();
await session.post("Profiler.takePreciseCoverage");
const text = await streamedRequest();
const { result } = await session.post("Profiler.takePreciseCoverage");

const files = new Set();
for (const script of result) {
  if (!script.url.startsWith(pathToFileURL(dist).href)) continue;
  // A function other than the module's own body (which starts at offset 0) ran.
  if (script.functions.some((f) => f.ranges[0].startOffset > 0 && f.ranges[0].count > 0)) files.add(relative(dist, new URL(script.url).pathname));
}
const folders = new Set([...files].map((f) => (f.includes("/") ? f.split("/")[0] : f)));
console.log(`reply: ${JSON.stringify(text)}`);
console.log(`rooms (files): ${files.size}; folders: ${folders.size} (${[...folders].sort().join(", ")})`);
if (process.argv.includes("--list")) for (const f of [...files].sort()) console.log(`  ${f}`);
process.exit(0);
