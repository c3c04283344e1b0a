#!/usr/bin/env node
/**
 * Real-engine smoke run: our library + the real web-llm engine in its worker,
 * a real MLC model folder, headless Chromium with WebGPU on SwiftShader.
 *
 *   npm run smoke:real -- --model-dir <folder> --model-lib <wasm> [--webllm 0.2.79|0.2.86]
 *                         [--max-tokens 2] [--only stream,multiturn,abort,tools,forced,sdk] [--port 0] [--timeout-s 3600]
 *                         [--speculative off: the chat client without speculative decoding, e.g. the forced call
 *                          without jump-forward, to compare its x_webgpu.decode_passes with a default run's]
 *   npm run smoke:real -- --embed-model-dir <folder> --embed-model-lib <wasm> [--webllm 0.2.86]
 *                         [--embed-model-id id] [--stub-kernels argsort1_kernel_2|none] [--inputs N]
 *   both folders: also a "mixed" step (chat + embedding model in one client, no reloads);
 *   --steps chat,embed,mixed,promptcache,grammar,audio picks what runs (default: the first three, or audio with --audio).
 *   promptcache (chat model): the same greedy requests (a chat, regenerate, next turn, a new chat
 *   with the same system prompt, an edit, the two chats interleaved) on a client with prompt
 *   caching and one without; checks equal outputs token for token, and cached tokens = the
 *   common prefix with what the cache holds, computed here with the model's own tokenizer
 *   (@lenml/tokenizers on its tokenizer.json). [--cache-budget 4096]
 *   speculative (chat model): a greedy reply with speculation off, the same request with
 *   `prediction` = that reply, a regenerate with speculation on, and off; checks the same tokens,
 *   reports decode passes per token and the times side by side; then the request with speculation on,
 *   no prediction and nothing cached for it (its own prompt_cache_key), which must take ≤ 1.05 × the
 *   wall time of speculation off with the same tokens. [--max-tokens 32]
 *   [--spec-steps "name;name"] [--spec-prediction <text>: the prediction when its reply step is skipped]
 *   resume (chat model, asked for by name): a greedy background response run to its end; the same
 *   request interrupted by a page reload after --resume-cut text deltas (default 3) and resumed by
 *   the next page's client; checks the same final text, and reports the reply tokens prefilled on
 *   resume. [--max-tokens 8]
 *   batching (chat model, asked for by name): four greedy requests one after another on an engine
 *   without batching, then the same four at once on one with `batching: { maxRows: 4 }` (each
 *   phase after a warm-up); checks the same tokens and sets the wall times side by side.
 *   [--max-tokens 16] [--batch-phases "alone;batched;n3;drafts"] [--batch-forward measured|batched]
 *   The phase `drafts` runs only when named: the four at once on a batching engine, each with
 *   `prediction` = its reply alone (the alone phase's when it ran too, else a first round without
 *   speculation), then a regenerate of the four with speculation on (drafts from the prompt cache);
 *   each row's draft is verified in `batch_prefill` beside the other rows' tokens. Checks the same
 *   tokens as alone, accepted drafts, fewer decode passes than without drafts, and verifies that
 *   rode beside other rows (the engine's forwards by kind); reports each request's x_webgpu counts.
 *   [--batch-reference <report.json>: the alone phase of an earlier run's report (same library,
 *   web-llm and --max-tokens) as the drafts phase's replies alone, so the alone phase need not run again]
 *   [--batch-prediction <text>: the reply alone to every prompt, as text (the random-weight model gives
 *   all four the same one): the prediction, and what each reply must equal, with no reply alone run]
 *   [--batch-drafts-rounds "prediction;regenerate": the drafts phase's rounds (default both)]
 *   mcp (chat model, asked for by name): a real MCP server (test/support/mcp-server.ts, CORS on) on
 *   127.0.0.1; a Responses request forces its `add` tool (tool_choice, require_approval "never"); checks
 *   the server ran the call, the mcp_call item carries its output, and the reply continued after it.
 *   [--max-tokens 24] [--mcp-tool add|big: big takes no arguments, so the grammar writes the whole
 *   call; a random-weight model may write add's numbers without end]
 *   grammar (chat model, asked for by name): greedy, a regex `response_format` and a custom tool
 *   with a Lark grammar forced by tool_choice; checks the text and the call's input are in the
 *   grammar's language (random weights follow no instruction: the grammar forces it).
 *   npm run smoke:real -- --model gemma-4-E2B-it-q4f16_1-MLC --audio speech.wav [--image cat.png]
 *                         [--model-dir <folder> --model-lib <wasm>] [--max-tokens 16]
 *   the audio step: a model that takes audio (Gemma 4 on web-llm 0.2.86) is asked about the file
 *   (wav/mp3/webm/ogg by extension) and the image; without --model-dir the prebuilt record is used
 *   with its own URLs (network). Only the audio step runs unless --steps says otherwise.
 *
 * An embedding model (its mlc-chat-config.json model_type is an encoder such
 * as `bert`) given as --model-dir is recognised and run as one. The embedding
 * run uses a custom worker (test/real/embed-worker.ts) that installs a
 * TEST-ONLY shim (test/real/webllm-compat-shim.ts): the two wasm imports that
 * 2025 libraries need on web-llm 0.2.86, and an empty body for the named WGSL
 * kernels (default argsort1_kernel_2, the top-p sort kernel embeddings never
 * run, which SwiftShader takes ~13 min to compile). It embeds a batch larger
 * than the library's compiled batch (max_batch_size read from the .wasm),
 * reloads from IndexedDB, and compares with web-llm's own engine.embeddings.
 *
 * <folder> is an MLC model folder whose files sit in <folder>/resolve/main/
 * (web-llm appends resolve/main/ to a model URL), e.g. one built by the
 * shared real-model tool (random weights for a prebuilt Qwen2-0.5B library).
 * The page (test/real/) is built with Vite, web-llm aliased to the version
 * asked for (0.2.79 = the `webllm-0279` dev dependency); the folder and the
 * library are served from 127.0.0.1 with a request counter; a fresh browser
 * profile makes the first load a network one. Prints ONE JSON report on
 * stdout (progress lines go to stderr); exits 1 when a check fails.
 */
import { build, createServer as createViteServer } from "vite";
import { chromium } from "playwright";
import { createServer } from "node:http";
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { extname, join, resolve, normalize } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { TokenizerLoader } from "@lenml/tokenizers";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json", ".wasm": "application/wasm", ".bin": "application/octet-stream", ".css": "text/css" };
/** web-llm version → the package the page imports as `@mlc-ai/web-llm`. */
const ALIAS = { "0.2.79": "webllm-0279", "0.2.86": "@mlc-ai/web-llm" };

const root = resolve(fileURLToPath(import.meta.url), "../..");
const args = parseArgs(process.argv.slice(2));
const modelDir = args["model-dir"] && resolve(args["model-dir"]);
const modelLib = args["model-lib"] && resolve(args["model-lib"]);
const webllm = args.webllm ?? "0.2.86";
const maxTokens = Number(args["max-tokens"] ?? 2);
const timeoutS = Number(args["timeout-s"] ?? 3600);
const modelId = args["model-id"] ?? args.model ?? "Qwen2.5-0.5B-Instruct-q4f32_1-MLC";
const audioFile = args.audio && resolve(args.audio);
const imageFile = args.image && resolve(args.image);
if (audioFile && !existsSync(audioFile)) fail(`${audioFile} not found.`);
if (imageFile && !existsSync(imageFile)) fail(`${imageFile} not found.`);
const only = args.only ? String(args.only).split(",") : undefined;
const log = (...a) => console.error("[smoke-real]", ...a);

let chatDir = modelDir;
let chatLib = modelLib;
let embedDir = args["embed-model-dir"] && resolve(args["embed-model-dir"]);
let embedLib = args["embed-model-lib"] && resolve(args["embed-model-lib"]);
if (chatDir && isEmbeddingFolder(chatDir) && !embedDir) [embedDir, embedLib, chatDir, chatLib] = [chatDir, chatLib, undefined, undefined];
if (!(chatDir && chatLib) && !(embedDir && embedLib) && !(audioFile && args.model)) fail("usage: npm run smoke:real -- --model-dir <folder> --model-lib <wasm> [--webllm 0.2.79] | --embed-model-dir <folder> --embed-model-lib <wasm>");
for (const dir of [chatDir, embedDir].filter(Boolean))
  if (!existsSync(join(dir, "resolve/main/mlc-chat-config.json"))) fail(`${dir}/resolve/main/mlc-chat-config.json not found: the model folder must hold resolve/main/.`);
for (const lib of [chatLib, embedLib].filter(Boolean)) if (!existsSync(lib)) fail(`${lib} not found.`);
if (!ALIAS[webllm]) fail(`--webllm must be one of ${Object.keys(ALIAS).join(", ")}`);
const stubKernels = String(args["stub-kernels"] ?? "argsort1_kernel_2").split(",").filter((k) => k && k !== "none");
const compiledBatch = embedLib ? maxBatchSizeOf(embedLib) : undefined;
// the id names the batch as web-llm's prebuilt ids do (`-b4`, `-b32`), and it replaces the prebuilt record of that id
const embedModelId = args["embed-model-id"] ?? `snowflake-arctic-embed-s-q0f32-MLC-b${compiledBatch ?? 32}`;
const inputCount = Number(args.inputs ?? (compiledBatch ? compiledBatch + 2 : 6));
// chat: the chat model's checks; embed: the embedding model's; mixed: both models in one client (needs both folders)
// promptcache is asked for by name: on SwiftShader its dozen requests take over an hour
const steps = String(args.steps ?? (audioFile ? "audio" : "chat,embed,mixed")).split(",");
const runAudio = !!audioFile && steps.includes("audio");
const runChat = !!chatDir && steps.includes("chat");
const runEmbed = !!embedDir && steps.includes("embed");
const runMixed = !!chatDir && !!embedDir && steps.includes("mixed");
const runPromptCache = !!chatDir && steps.includes("promptcache");
const runSpeculative = !!chatDir && steps.includes("speculative");
const runGrammar = !!chatDir && steps.includes("grammar");
const runResume = !!chatDir && steps.includes("resume");
const runBatching = !!chatDir && steps.includes("batching");
const runMcp = !!chatDir && steps.includes("mcp");
/** The fixture's `big` tool answers this many x's in the mcp step (a short output: SwiftShader prefills it at ~0.4 tokens/s). */
const MCP_BIG_SIZE = 8;

const cacheBudget = Number(args["cache-budget"] ?? 4096);
// The batching step's drafts phase may take an earlier run's replies alone: checked before anything starts.
const batchReference = runBatching && args["batch-reference"] ? aloneReplies(resolve(String(args["batch-reference"])), Number(args["max-tokens"] ?? 16)) : null;

const report = chatDir || runAudio
  ? { webllm, modelDir: chatDir, modelLib: chatLib, modelId, maxTokens, startedAt: new Date().toISOString() }
  : { webllm, startedAt: new Date().toISOString() };
if (embedDir) report.embedding = { modelDir: embedDir, modelLib: embedLib, modelId: embedModelId, compiledBatch, inputs: inputCount, stubKernels };
const outDir = join(root, "node_modules/.cache/smoke-real", webllm);
const profile = mkdtempSync(join(tmpdir(), "webgpu-openai-smoke-"));
let server;
let context;
const started = Date.now();
const watchdog = setTimeout(() => fail(`timed out after ${timeoutS} s`), timeoutS * 1000 + 60_000);
try {
  // 1. build the page (our library from source, web-llm aliased)
  const t0 = Date.now();
  await build({
    configFile: false,
    root: join(root, "test/real"),
    logLevel: "warn",
    resolve: { alias: webllm === "0.2.86" ? [] : [{ find: /^@mlc-ai\/web-llm$/, replacement: ALIAS[webllm] }] },
    worker: { format: "es" },
    build: { outDir, emptyOutDir: true, target: "es2022", minify: false, sourcemap: false, chunkSizeWarningLimit: 100_000 },
  });
  report.buildMs = Date.now() - t0;
  log(`built the page with web-llm ${webllm} in ${report.buildMs} ms`);

  // 2. serve page + model folder + library from 127.0.0.1, counting model requests
  let modelRequests = 0;
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === "/__counters") return send(res, 200, "application/json", JSON.stringify({ modelRequests }));
    let file;
    if (path.startsWith("/model/") && chatDir) file = safeJoin(chatDir, path.slice("/model/".length));
    else if (path === "/lib/model.wasm") file = chatLib;
    else if (path.startsWith("/embed-model/") && embedDir) file = safeJoin(embedDir, path.slice("/embed-model/".length));
    else if (path === "/lib/embed-model.wasm") file = embedLib;
    else file = safeJoin(outDir, path === "/" ? "index.html" : path.slice(1));
    if (path.startsWith("/model/") || path.startsWith("/embed-model/") || path.startsWith("/lib/")) modelRequests++;
    if (!file || !existsSync(file) || !statSync(file).isFile()) return send(res, 404, "text/plain", "not found");
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-length": statSync(file).size, "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(Number(args.port ?? 0), "127.0.0.1", ok));
  const origin = `http://127.0.0.1:${server.address().port}`;

  // 3. headless Chromium with the flags the browser tests use, a fresh profile
  context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: chromiumArgs() });
  const page = await context.newPage();
  const consoleTail = [];
  const keep = (line) => {
    consoleTail.push(line);
    if (consoleTail.length > 60) consoleTail.shift();
  };
  page.on("console", (m) => {
    keep(`[${m.type()}] ${m.text().slice(0, 300)}`);
    if (m.text().startsWith("[prompt-cache]") || m.text().startsWith("[speculative]") || m.text().startsWith("[resume]") || m.text().startsWith("[batching]") || m.text().startsWith("[mcp]")) log(m.text().slice(0, 3000)); // progress of the long steps
  });
  page.on("pageerror", (e) => keep(`[pageerror] ${e}`));
  page.on("worker", (w) => w.on("console", (m) => keep(`[worker ${m.type()}] ${m.text().slice(0, 300)}`)));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => window.smokeReady === true, null, { timeout: 60_000 });
  log(`page ready at ${origin}; running (slow on SwiftShader: many minutes)`);
  const t1 = Date.now();
  // On SwiftShader (and a busy machine) a full run can outlast the limit: then report what finished.
  const step = async (run, partial) => {
    const limit = Math.max(timeoutS * 1000 - (Date.now() - started) - 30_000, 1000);
    const done = run();
    const timedOut = await Promise.race([done.then(() => false), new Promise((ok) => setTimeout(() => ok(true), limit))]);
    if (timedOut) report.timedOutAfterS = Math.round((Date.now() - started) / 1000);
    return timedOut ? await page.evaluate(partial) : await done;
  };
  const countersUrl = `${origin}/__counters`;
  const speculativeOff = args["speculative"] === "off";
  if (runChat) report.result = await step(() => page.evaluate((o) => window.smoke(o), { modelId, countersUrl, maxTokens, only, ...(speculativeOff ? { speculative: false } : {}) }), () => window.smokeReport);
  const inputs = embedInputs(inputCount);
  if (runEmbed && !report.timedOutAfterS) {
    report.embedding.result = await step(() => page.evaluate((o) => window.smokeEmbed(o), { modelId: embedModelId, countersUrl, stubKernels, inputs, compiledBatch }), () => window.smokeEmbedReport);
  }
  if (runMixed && !report.timedOutAfterS) {
    const o = { chatModelId: modelId, embedModelId, countersUrl, stubKernels, inputs, compiledBatch };
    report.mixed = await step(() => page.evaluate((x) => window.smokeMixed(x), o), () => window.smokeMixedReport);
  }
  if (runPromptCache && !report.timedOutAfterS) {
    const o = { modelId, budgetTokens: cacheBudget, ...(args["cache-steps"] ? { only: String(args["cache-steps"]).split(";") } : {}) };
    report.promptCache = await step(() => page.evaluate((x) => window.smokePromptCache(x), o), () => window.smokePromptCacheReport);
  }
  if (runSpeculative && !report.timedOutAfterS) {
    const o = { modelId, maxTokens: Number(args["max-tokens"] ?? 32), ...(args["spec-steps"] ? { only: String(args["spec-steps"]).split(";") } : {}), ...(args["spec-prediction"] ? { prediction: String(args["spec-prediction"]) } : {}) };
    report.speculative = await step(() => page.evaluate((x) => window.smokeSpeculative(x), o), () => window.smokeSpeculativeReport);
  }
  if (runBatching && !report.timedOutAfterS) {
    const reference = {
      ...(batchReference ? { reference: batchReference } : {}),
      ...(args["batch-prediction"] !== undefined ? { prediction: String(args["batch-prediction"]) } : {}),
      ...(args["batch-drafts-rounds"] ? { draftsRounds: String(args["batch-drafts-rounds"]).split(";") } : {}),
    };
    const o = { modelId, maxTokens: Number(args["max-tokens"] ?? 16), ...(args["batch-phases"] ? { only: String(args["batch-phases"]).split(";") } : {}), ...(args["batch-forward"] ? { forward: String(args["batch-forward"]) } : {}), ...reference };
    report.batching = await step(() => page.evaluate((x) => window.smokeBatching(x), o), () => window.smokeBatchingReport);
  }
  if (runMcp && !report.timedOutAfterS) {
    // The test fixture (TypeScript) loaded through Vite in Node, as the unit tests load it.
    const vite = await createViteServer({ root: resolve(fileURLToPath(import.meta.url), "../.."), server: { middlewareMode: true }, appType: "custom", logLevel: "warn" });
    const { startMcpFixture } = await vite.ssrLoadModule("/test/support/mcp-server.ts");
    const fixture = await startMcpFixture({ cors: true, bigSize: MCP_BIG_SIZE });
    try {
      const o = { modelId, serverUrl: fixture.url, maxTokens: Number(args["max-tokens"] ?? 24), tool: args["mcp-tool"] ?? "add" };
      report.mcp = await step(() => page.evaluate((x) => window.smokeMcp(x), o), () => window.smokeMcpReport);
      report.mcp.serverCalls = [...fixture.calls];
      report.mcp.serverMethods = [...fixture.methods];
    } finally {
      await fixture.close();
      await vite.close();
    }
  }
  if (runGrammar && !report.timedOutAfterS) {
    report.grammar = await step(() => page.evaluate((x) => window.smokeGrammar(x), { modelId }), () => window.smokeGrammarReport);
  }
  if (runResume && !report.timedOutAfterS) {
    const o = { modelId, maxTokens: Number(args["max-tokens"] ?? 8), cutAfter: Number(args["resume-cut"] ?? 3) };
    const r = (report.resume = { options: o });
    r.uninterrupted = await step(() => page.evaluate((x) => window.smokeResume({ ...x, phase: "uninterrupted" }), o), () => window.smokeResumeReport);
    if (!report.timedOutAfterS) r.start = await step(() => page.evaluate((x) => window.smokeResume({ ...x, phase: "start" }), o), () => window.smokeResumeReport);
    if (!report.timedOutAfterS && r.start?.id) {
      log(`resume: reloading the page after ${r.start.deltasBeforeCut} deltas (${JSON.stringify(r.start.textBeforeCut)})`);
      await page.reload();
      await page.waitForFunction(() => window.smokeReady === true, null, { timeout: 60_000 });
      r.finish = await step(() => page.evaluate((x) => window.smokeResume({ ...x, phase: "finish" }), { ...o, id: r.start.id }), () => window.smokeResumeReport);
    }
  }
  if (runAudio && !report.timedOutAfterS) {
    const o = {
      modelId,
      localModel: !!chatDir,
      hasManifest: !!chatDir && existsSync(join(chatDir, "resolve/main/mlc-model-manifest.json")),
      audio: { data: readFileSync(audioFile).toString("base64"), format: extname(audioFile).slice(1).toLowerCase() },
      ...(imageFile ? { image: `data:image/${extname(imageFile).slice(1).toLowerCase().replace("jpg", "jpeg")};base64,${readFileSync(imageFile).toString("base64")}` } : {}),
      maxTokens: Number(args["max-tokens"] ?? 16),
    };
    report.audio = { file: audioFile, image: imageFile, result: await step(() => page.evaluate((x) => window.smokeAudio(x), o), () => window.smokeAudioReport) };
  }
  report.runMs = Date.now() - t1;
  report.consoleTail = consoleTail.slice(-25);
  report.checks = {
    ...(runChat ? checks(report.result ?? {}) : {}),
    ...(runEmbed ? embedChecks(report.embedding.result ?? {}) : {}),
    ...(runMixed ? mixedChecks(report.mixed ?? {}) : {}),
    ...(runPromptCache ? promptCacheChecks(report.promptCache ?? {}) : {}),
    ...(runSpeculative ? speculativeChecks(report.speculative ?? {}) : {}),
    ...(runGrammar ? grammarChecks(report.grammar ?? {}) : {}),
    ...(runBatching ? batchingChecks(report.batching ?? {}) : {}),
    ...(runMcp ? mcpChecks(report.mcp ?? {}) : {}),
    ...(runAudio ? audioChecks(report.audio?.result ?? {}) : {}),
    ...(runResume ? resumeChecks(report.resume ?? {}) : {}),
  };
} catch (error) {
  report.error = String(error?.stack ?? error);
} finally {
  clearTimeout(watchdog);
  await context?.close().catch(() => undefined);
  server?.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 1));
process.exit(report.error || report.timedOutAfterS || Object.values(report.checks ?? {}).some((c) => c === false) ? 1 : 0);

/** The pass/fail summary the test and the reader look at first. */
function checks(r) {
  const c = {};
  const net = r.loadFromNetwork ?? { error: "not run" };
  const idb = r.loadFromIndexedDB ?? { error: "not run" };
  c.loadedFromNetwork = !net.error && net.modelRequests > 0;
  c.loadedFromIndexedDBWithZeroRequests = !idb.error && idb.modelRequests === 0;
  c.progressMonotonicToOne = net.fractionMonotonic && idb.fractionMonotonic && net.lastProgress?.fraction === 1 && idb.lastProgress?.fraction === 1;
  if (r.stream) {
    const s = r.stream;
    c.streamedWithUsageAndTimings = !s.error && s.contentChunks >= 1 && s.usage?.completion_tokens >= 1 && s.x_webgpu?.prefill_tokens_per_s > 0;
  }
  if (r.multiTurn) {
    const m = r.multiTurn;
    c.firstTurnStopped = m.turn1.finish_reason === "stop";
    c.secondTurnReusedKv = !m.turn2.error && m.cachedTokens > 0 && m.cachedTokens >= m.turn1.usage?.prompt_tokens && m.webllmPrefilledThisTurn < m.turn1.usage?.prompt_tokens;
  }
  if (r.abort) {
    c.abortEndedStream = !r.abort.aborted.error || r.abort.aborted.error.name === "AbortError";
    c.requestAfterAbortSucceeded = !!r.abort.after && !r.abort.after.error && !!r.abort.after.finish_reason && typeof r.abort.after.message?.content === "string";
  }
  if (r.toolMessage) c.toolMessageAccepted = !r.toolMessage.error;
  if (r.tools) c.toolsAccepted = !r.tools.error;
  // A forced call ends as a call within max_tokens (no whitespace runs inside it).
  for (const key of ["toolForced", "toolForcedParallel"]) if (r[key]) c[`${key}Completed`] = r[key].finish_reason === "tool_calls" && r[key].message?.tool_calls?.length >= 1;
  if (r.toolForcedStreamed) c.toolForcedStreamedCompleted = r.toolForcedStreamed.finish_reason === "tool_calls" && r.toolForcedStreamed.calls?.length >= 1;
  if (r.sdk) c.sdkStreamed = !r.sdk.streamed.error && r.sdk.streamed.chunks >= 2;
  return c;
}

/** The embedding run's pass/fail summary. */
function embedChecks(r) {
  const c = {};
  const net = r.loadFromNetwork ?? { error: "not run" };
  const idb = r.loadFromIndexedDB ?? { error: "not run" };
  c.embedLoadedFromNetwork = !net.error && net.modelRequests > 0;
  c.embedLoadedFromIndexedDBWithZeroRequests = !idb.error && idb.modelRequests === 0;
  c.embedProgressMonotonicToOne = !!(net.fractionMonotonic && idb.fractionMonotonic && net.lastProgress?.fraction === 1 && idb.lastProgress?.fraction === 1);
  const e = r.embedAfterIndexedDBLoad ?? { error: "not run" };
  const inOrder = (x) => !x.error && x.count === inputCount && x.indices?.every((i, k) => i === k) && x.dims?.length === 1 && x.dims[0] > 0 && x.finite;
  c.embeddedBatchLargerThanCompiledBatch = inputCount > (compiledBatch ?? 0) && inOrder(r.embedAfterNetworkLoad ?? {}) && inOrder(e) && e.usage?.prompt_tokens > 0;
  c.sameVectorsAfterIndexedDBReload = r.compare?.maxAbsDiffNetworkVsIndexedDBLoad === 0;
  c.openaiSdkBase64MatchesFloat = inOrder(r.embedThroughOpenAISdk ?? {}) && r.compare?.maxAbsDiffSdkBase64VsFloat === 0;
  c.webllmDirectReadOurCacheWithZeroRequests = !r.webllmDirectLoad?.error && r.webllmDirectLoad?.modelRequests === 0;
  // same library, same kernels, same weights: expected bit-identical; 1e-5 leaves room for a different dispatch order
  c.sameVectorsAsWebllmDirect = typeof r.compare?.maxAbsDiffOursVsWebllm === "number" && r.compare.maxAbsDiffOursVsWebllm <= 1e-5;
  c.sameTokenCountAsWebllmDirect = !!e.usage && e.usage.prompt_tokens === r.webllmDirectEmbed?.usage?.prompt_tokens;
  return c;
}

/** Chat + embedding model in one client: both resident, alternating requests reload neither. */
function mixedChecks(r) {
  const okEmbed = (e) => !!e && !e.error && e.count === inputCount;
  const okChat = (c) => !!c && !c.error && c.usage?.completion_tokens >= 1;
  return {
    mixedBothLoaded: !r.loadError && typeof r.embedLoadMs === "number",
    mixedEmbeddingModelListedAsEmbedding: !!r.listed?.some((m) => m.id === embedModelId && m.type === "embedding"),
    mixedChatAnsweredBetweenEmbeddings: okChat(r.chat1) && okChat(r.chat2),
    mixedEmbeddedTwiceIdentically: okEmbed(r.embed1) && okEmbed(r.embed2) && r.maxAbsDiffEmbed1VsEmbed2 === 0,
    mixedNoReloadWhileAlternating: r.progressEventsAfterLoads === 0 && r.modelRequestsAfterLoads === 0,
  };
}

/**
 * Prompt caching: per step, the prompt's token ids as web-llm renders and tokenizes it (the
 * model's conv_template, each piece encoded on its own, with the model's tokenizer), and what the
 * cache holds (every earlier cached request's prompt and its reply's tokens but the last; the
 * budget keeps them all). Expected cached = the longest common prefix, less one when it covers
 * the whole prompt; prefilled (x_webgpu.prefill_tokens) = prompt − cached. Where the requests ran
 * as rows of continuous batching (the report's `batching.available`, from client.stats(); the
 * default), a row's sequence is forked from the cached one at most one token short of that
 * sequence's end (webllm-binding.ts forkInto: the cached sequence must go on taking tokens), so a
 * prefix that is a whole held sequence counts one less.
 */
function promptCacheChecks(r) {
  const steps = r.steps ?? [];
  const dir = join(chatDir, "resolve/main");
  const config = JSON.parse(readFileSync(join(dir, "mlc-chat-config.json"), "utf8"));
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")),
    tokenizerConfig: existsSync(join(dir, "tokenizer_config.json")) ? JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")) : {},
  });
  const encode = (text) => Array.from(tokenizer.encode(text, { add_special_tokens: false }));
  const held = [];
  const rows = [];
  for (const s of steps) {
    const ids = renderIds(config.conv_template, s.messages, encode);
    const c = s.cached ?? {};
    const p = s.plain ?? {};
    const forkable = (h) => (r.batching?.available ? Math.min(commonPrefixLength(h, ids), h.length - 1) : commonPrefixLength(h, ids));
    const lcp = Math.min(Math.max(0, ...held.map(forkable)), ids.length - 1);
    const cachedTokens = c.usage?.prompt_tokens_details?.cached_tokens;
    rows.push({
      name: s.name,
      promptIds: ids.length,
      promptTokens: [c.usage?.prompt_tokens, p.usage?.prompt_tokens],
      expectedCached: lcp,
      cachedTokens: [cachedTokens, p.usage?.prompt_tokens_details?.cached_tokens],
      prefilled: [c.x_webgpu?.prefill_tokens, p.x_webgpu?.prefill_tokens],
      tokens: [c.tokens, p.tokens],
      ttftMs: [c.ttftMs, p.ttftMs],
      ok: {
        noError: !c.error && !p.error,
        sameTokens: !c.error && !p.error && JSON.stringify(c.tokens) === JSON.stringify(p.tokens) && c.tokens?.length > 0,
        promptRendered: c.usage?.prompt_tokens === ids.length && p.usage?.prompt_tokens === ids.length,
        cachedIsCommonPrefix: cachedTokens === lcp,
        prefilledIsPromptMinusPrefix: c.x_webgpu?.prefill_tokens === ids.length - lcp,
      },
    });
    // the reply's tokens as ids (a token text that is not exactly one id can match nothing)
    const gen = (c.tokens ?? []).map((t) => {
      const e = encode(t);
      return e.length === 1 ? e[0] : -1;
    });
    if (!c.error) held.push([...ids, ...gen.slice(0, -1)]);
  }
  r.table = rows;
  const all = (k) => rows.length > 0 && rows.every((x) => x.ok[k]);
  const regen = rows.find((x) => x.name === "regenerate A1");
  if (regen) r.regenerateTtftMs = { withCache: regen.ttftMs[0], without: regen.ttftMs[1] };
  return {
    promptCacheAllStepsRan: r.done === true && rows.length === 6,
    promptCacheNoErrors: all("noError"),
    promptCacheSameGreedyTokensWithAndWithout: all("sameTokens"),
    promptCachePromptTokensAsRendered: all("promptRendered"),
    promptCacheCachedEqualsCommonPrefix: all("cachedIsCommonPrefix"),
    promptCachePrefilledEqualsPromptMinusPrefix: all("prefilledIsPromptMinusPrefix"),
  };
}

/** The mcp step's summary: the forced call ran on the server, its output is in the mcp_call item, and the reply went on. */
function mcpChecks(r) {
  const output = r.output ?? [];
  const tool = r.tool ?? "add";
  const at = output.findIndex((item) => item.type === "mcp_call");
  const call = output[at];
  let args = null;
  try {
    args = JSON.parse(call?.arguments ?? "null");
  } catch {
    args = null;
  }
  // What the fixture server answers: add's sum of the call's arguments, big's MCP_BIG_SIZE x's.
  const expected = tool === "big" ? "x".repeat(MCP_BIG_SIZE) : args && typeof args.a === "number" && typeof args.b === "number" ? String(args.a + args.b) : null;
  return {
    mcpListed: output.some((item) => item.type === "mcp_list_tools" && (item.tools ?? []).includes(tool)),
    mcpServerRanTheCall: (r.serverCalls ?? []).includes(tool),
    mcpCallOutputIsTheServers: !!call && !call.error && expected !== null && call.output === expected,
    mcpReplyContinuedAfterTheCall: at >= 0 && output.slice(at + 1).some((item) => item.type === "message"),
  };
}

/**
 * The batching step's summary: the same greedy tokens alone and batched, and the wall times side by
 * side; the checks of a phase that was not asked for (--batch-phases) are left out.
 */
function batchingChecks(r) {
  const phases = r.phases ?? [];
  const asked = (name) => (args["batch-phases"] ? String(args["batch-phases"]).split(";").includes(name) : name !== "drafts");
  const drafts = phases.find((p) => p.name === "drafts");
  const draftsPart = asked("drafts") ? batchingDraftsChecks(r, drafts) : {};
  const alone = phases.find((p) => p.name === "alone");
  const batched = phases.find((p) => p.name === "batched");
  const ok = (p) => !!p && !p.error && (p.requests ?? []).length === 4 && p.requests.every((q) => !q.error && q.tokens?.length > 0);
  r.table = (batched ?? alone)?.requests?.map((q, i) => ({
    question: q.question,
    tokens: q.tokens?.length,
    sameTokensAsAlone: !!alone && !!batched && JSON.stringify(batched.requests?.[i]?.tokens) === JSON.stringify(alone.requests?.[i]?.tokens),
    aloneS: alone?.requests?.[i] ? `${alone.requests[i].startS}–${alone.requests[i].endS}` : null,
    batchedS: batched?.requests?.[i] ? `${batched.requests[i].startS}–${batched.requests[i].endS}` : null,
    batchedTtftS: batched?.requests?.[i]?.ttftMs / 1000,
    batchedRows: batched?.requests?.[i]?.usage?.batch ?? null,
  }));
  r.wall = { aloneS: alone?.wallMs / 1000, batchedS: batched?.wallMs / 1000, ratio: alone && batched ? +(batched.wallMs / alone.wallMs).toFixed(3) : null };
  const n3 = phases.find((p) => p.name === "n3");
  const promptTokens = n3?.usage?.prompt_tokens;
  const aloneAndBatched = asked("alone") && asked("batched");
  return {
    ...(n3 ? { batchingN3PrefillsOnce: !n3.error && n3.choices?.length === 3 && promptTokens > 0 && n3.prefilled <= promptTokens + 2 } : {}),
    ...(aloneAndBatched
      ? {
          batchingBothPhasesRan: ok(alone) && ok(batched),
          batchingRowsAvailable: batched?.batchRows === 4,
          batchingSameGreedyTokens: ok(alone) && ok(batched) && r.table.every((x) => x.sameTokensAsAlone),
          batchingSharedPasses: ok(batched) && batched.requests.every((q) => (q.usage?.batch?.maxRows ?? 0) >= 2),
          batchingWallAtMost085: r.wall.ratio !== null && r.wall.ratio <= 0.85,
        }
      : {}),
    ...draftsPart,
  };
}

/**
 * The alone phase's replies in an earlier smoke-real report (`--batch-reference`): the drafts
 * phase's reference when its own run skips the alone phase. Only a run of the same library,
 * web-llm version and max tokens gives the same greedy tokens.
 */
function aloneReplies(file, maxTokensNow) {
  if (!existsSync(file)) fail(`--batch-reference: ${file} not found.`);
  let earlier;
  try {
    // The report as printed (npm run's banner before it, when stdout was saved whole).
    const text = readFileSync(file, "utf8");
    earlier = JSON.parse(text.slice(Math.max(0, text.search(/^\{/m))));
  } catch (error) {
    fail(`--batch-reference: ${file} is not a smoke-real JSON report (${error.message}).`);
  }
  const alone = earlier?.batching?.phases?.find((p) => p.name === "alone");
  if (!alone || alone.error || (alone.requests ?? []).length !== 4 || alone.requests.some((q) => q.error || !q.tokens?.length)) fail(`--batch-reference: ${file} holds no complete alone phase of a batching step.`);
  const mismatch = [
    earlier.batching.maxTokens !== maxTokensNow ? `--max-tokens ${earlier.batching.maxTokens} (now ${maxTokensNow})` : null,
    earlier.webllm !== webllm ? `web-llm ${earlier.webllm} (now ${webllm})` : null,
    earlier.modelLib !== chatLib ? `library ${earlier.modelLib} (now ${chatLib})` : null,
  ].filter(Boolean);
  if (mismatch.length > 0) fail(`--batch-reference: ${file} was run with ${mismatch.join(", ")}: its greedy tokens are no reference for this run.`);
  return alone.requests.map((q) => ({ question: q.question, tokens: q.tokens, text: q.text, usage: q.usage }));
}

/**
 * The drafts phase: per round (prediction, regenerate) and request, the tokens against the reply
 * alone, its x_webgpu draft counts, decode passes against the reply without drafts (its own count,
 * else one per token but the first), and the rows that shared its passes; per round the engine's
 * forward passes and forwards by kind (a verify beside other rows is `batch_prefill` with several
 * logit positions in one sequence).
 */
function batchingDraftsChecks(r, drafts) {
  const reference = drafts?.reference ?? [];
  const rounds = (drafts?.rounds ?? []).filter((x) => x.name !== "reference");
  // Without drafts a reply of n tokens takes n − 1 decode passes (its first token is the prompt's): the
  // reference's own count, else its tokens', else (a reference given as text) the reply's own tokens'.
  const baselinePasses = (ref, q) => ref?.decodePasses ?? (ref?.tokens?.length ? ref.tokens.length - 1 : q.tokens?.length ? q.tokens.length - 1 : null);
  // Token for token where the reference has its tokens; else its text (a --batch-prediction).
  const sameAsReference = (q, ref) => !q.error && q.tokens?.length > 0 && (ref?.tokens ? JSON.stringify(q.tokens) === JSON.stringify(ref.tokens) : typeof ref?.text === "string" && q.text === ref.text);
  r.draftsTable = rounds.flatMap((x) =>
    (x.requests ?? []).map((q, i) => ({
      round: x.name,
      question: q.question,
      tokens: q.tokens?.length,
      sameTokensAsReference: sameAsReference(q, reference[i]),
      drafted: q.usage?.draftTokens ?? null,
      accepted: q.usage?.acceptedDraftTokens ?? null,
      prediction: q.usage?.acceptedPredictionTokens !== undefined ? [q.usage.acceptedPredictionTokens, q.usage.rejectedPredictionTokens] : null,
      decodePasses: q.usage?.decodePasses ?? null,
      passesWithoutDrafts: baselinePasses(reference[i], q),
      batch: q.usage?.batch ?? null,
      wallS: q.ms / 1000,
      error: q.error ?? null,
    })),
  );
  // the reference: the alone phase's replies, or (alone not run) the phase's own round without speculation
  r.draftsReferenceFrom = drafts?.referenceFrom ?? null;
  r.draftsRounds = (drafts?.rounds ?? []).map((x) => ({ round: x.name, wallS: x.wallMs / 1000, engine: x.engine ?? null }));
  const rows = r.draftsTable;
  const roundsAsked = args["batch-drafts-rounds"] ? String(args["batch-drafts-rounds"]).split(";").length : 2;
  const ran = !!drafts && !drafts.error && rounds.length === roundsAsked && rounds.every((x) => (x.requests ?? []).length === 4) && reference.length === 4;
  const sum = (list, of) => list.reduce((n, x) => n + (of(x) ?? 0), 0);
  // Each round on its own: the prediction's drafts, and the regenerate's (the replies the prompt cache holds).
  const eachRound = (test) => ran && rounds.every((x) => test(rows.filter((row) => row.round === x.name), x));
  return {
    batchingDraftsRan: ran && rows.every((x) => !x.error),
    batchingDraftsSameTokens: ran && rows.every((x) => x.sameTokensAsReference),
    batchingDraftsAccepted: eachRound((list) => sum(list, (x) => x.accepted) > 0),
    batchingDraftsFewerPasses: eachRound((list) => list.every((x) => x.decodePasses !== null && x.passesWithoutDrafts !== null) && sum(list, (x) => x.decodePasses) < sum(list, (x) => x.passesWithoutDrafts)),
    batchingDraftsVerifiedBesideRows: eachRound((_list, x) => (x.engine?.forward_kinds?.verify_beside_rows ?? 0) > 0),
    batchingDraftsSharedPasses: ran && rows.every((x) => (x.batch?.maxRows ?? 0) >= 2),
  };
}

/** The speculative step's summary: same greedy tokens with and without, passes per token, times side by side. */
function speculativeChecks(r) {
  const steps = r.steps ?? [];
  // the reference: the reply with speculation off (absent when only later steps ran: nothing to compare)
  const base = steps.find((s) => s.name === "reply, speculation off");
  r.table = steps.map((s) => ({
    name: s.name,
    tokens: s.tokens?.length,
    sameTokensAsSpeculationOff: !!base && JSON.stringify(s.tokens) === JSON.stringify(base.tokens),
    decodePasses: s.usage?.decodePasses,
    passesPerToken: s.usage?.decodePasses !== undefined && s.tokens?.length ? +(s.usage.decodePasses / s.tokens.length).toFixed(3) : null,
    drafted: s.usage?.draftTokens,
    accepted: s.usage?.acceptedDraftTokens,
    prediction: s.usage?.acceptedPredictionTokens !== undefined ? [s.usage.acceptedPredictionTokens, s.usage.rejectedPredictionTokens] : null,
    prefilled: s.usage ? s.usage.promptTokens - s.usage.cachedTokens : null,
    ttftS: s.ttftMs / 1000,
    decodeS: s.decodeMs / 1000,
    wallS: s.ms / 1000,
  }));
  // A check is reported only when the steps it compares were asked for (--spec-steps runs a subset, e.g. the
  // two steps that are timed alone): a step left out is not a failure.
  const ranStep = (s) => !s.error && s.tokens?.length > 0;
  const ran = (name) => steps.some((s) => s.name === name && ranStep(s));
  const row = (name) => r.table.find((x) => x.name === name);
  const when = (names, check) => (names.every(ran) ? check(...names.map(row)) : undefined);
  const checks = {
    speculativeAllStepsRan: r.done === true && steps.length > 0 && steps.every(ranStep),
    speculativeReplyAtLeast32Tokens: base ? (base.tokens?.length ?? 0) >= 32 : undefined,
    speculativeSameGreedyTokens: base ? r.table.every((x) => x.sameTokensAsSpeculationOff) : undefined,
    speculativeFewerPassesWithPrediction: when(["same request, prediction = reply", "reply, speculation off"], (a, b) => a.decodePasses < b.decodePasses),
    speculativeFewerPassesOnRegenerate: when(["regenerate, speculation on", "regenerate, speculation off"], (a, b) => a.decodePasses < b.decodePasses),
    // Issue 34: greedy, no prediction, nothing cached: speculation on within 1.05 × the wall time of off.
    // Needs only its own step and the reference, so it can be timed alone (--spec-steps) on a slow device.
    speculativeNoSlowerWithoutPrediction: when(["reply, speculation on, nothing cached", "reply, speculation off"], (a, b) => a.sameTokensAsSpeculationOff && a.wallS <= 1.05 * b.wallS),
  };
  return Object.fromEntries(Object.entries(checks).filter(([, v]) => v !== undefined));
}

/** web-llm's Conversation.getPromptArray for text messages, each piece tokenized separately (as its getInputData does). */
function renderIds(t, messages, encode) {
  let rest = messages;
  let system = t.system_message;
  if (messages[0]?.role === "system") {
    system = messages[0].content;
    rest = messages.slice(1);
  }
  const pieces = [t.system_template.replace("{system_message}", system)];
  const fill = { user: "{user_message}", assistant: "{assistant_message}", tool: "{tool_message}" };
  rest.forEach((m, i) => {
    const body = (t.role_templates?.[m.role] ?? fill[m.role]).replace(fill[m.role], m.content).replace("{function_string}", "");
    pieces.push(t.roles[m.role] + (t.role_content_sep ?? ": ") + body + t.seps[i % t.seps.length]);
  });
  pieces.push(t.roles.assistant + (t.role_empty_sep ?? ": "));
  return [...(t.system_prefix_token_ids ?? []), ...pieces.flatMap(encode)];
}

function commonPrefixLength(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Grammars: each output is in its grammar's language (the page tests it with the equivalent RegExp). */
function grammarChecks(r) {
  return {
    grammarModelLoaded: !!r.load && !r.load.error,
    grammarRegexOutputMatches: r.regex?.matches === true,
    grammarCustomToolInputMatches: r.customTool?.matches === true && r.customTool?.finish_reason === "tool_calls",
  };
}

/** The audio run's pass/fail summary: the model loaded, took the audio (and image) and answered; its manifest declares audio. */
/** The resume step: the resumed response ends as the uninterrupted one did, continued (not regenerated) after the cut. */
function resumeChecks(r) {
  const { uninterrupted: u = {}, start: s = {}, finish: f = {} } = r;
  return {
    resumeReferenceCompleted: !u.error && typeof u.text === "string" && u.text.length > 0,
    resumeCutMidReply: (s.deltasBeforeCut ?? 0) > 0 && typeof u.text === "string" && u.text.startsWith(s.textBeforeCut ?? "-") && u.text !== s.textBeforeCut,
    resumeSameTextAsUninterrupted: !f.error && f.status === u.status && f.text === u.text,
    resumeContinuedNotRegenerated: (f.x_webgpu?.resumed?.reply_tokens ?? 0) >= (s.deltasBeforeCut ?? 1),
  };
}

function audioChecks(r) {
  const answered = (x) => !!x && !x.error && x.usage?.completion_tokens >= 1;
  return {
    audioModelLoaded: !!r.load && !r.load.error,
    audioModalitiesListed: Array.isArray(r.inputModalitiesAfterLoad) && r.inputModalitiesAfterLoad.includes("audio"),
    audioAnswered: answered(r.audio),
    ...(imageFile ? { imageAnswered: answered(r.image) } : {}),
  };
}

/** `n` short inputs of different lengths; the last repeats the first (it lands in another batch). */
function embedInputs(n) {
  // short: SwiftShader embeds ~1.5-5 tokens/s, and every batch is padded to its longest input
  const base = ["red fox", "blue sky at noon", "green tea", "a cat", "web gpu"];
  const out = Array.from({ length: Math.max(n - 1, 1) }, (_, i) => (i < base.length ? base[i] : `${base[i % base.length]} (${i})`));
  if (n > 1) out.push(out[0]);
  return out;
}

/** Encoder model types web-llm runs as embedding models. */
function isEmbeddingFolder(dir) {
  try {
    const config = JSON.parse(readFileSync(join(dir, "resolve/main/mlc-chat-config.json"), "utf8"));
    return ["bert"].includes(config.model_type);
  } catch {
    return false;
  }
}

/** The compiled batch of an embedding library: `max_batch_size` in the metadata JSON the compiler embeds in the .wasm. */
function maxBatchSizeOf(lib) {
  const m = /"max_batch_size":\s*(\d+)/.exec(readFileSync(lib).toString("latin1"));
  return m ? Number(m[1]) : undefined;
}

/** chromiumArgs from vite.config.ts, so the smoke run and the browser tests use the same flags. */
function chromiumArgs() {
  const text = readFileSync(join(root, "vite.config.ts"), "utf8");
  const block = /export const chromiumArgs = \[([\s\S]*?)\]/.exec(text);
  if (!block) fail("chromiumArgs not found in vite.config.ts");
  return [...block[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
}

function safeJoin(base, rel) {
  const full = normalize(join(base, rel));
  return full.startsWith(base) ? full : null;
}

function send(res, status, type, body) {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
}

function parseArgs(list) {
  const out = {};
  for (let i = 0; i < list.length; i++) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(list[i]);
    if (!m) continue;
    out[m[1]] = m[2] ?? (list[i + 1] && !list[i + 1].startsWith("--") ? list[++i] : "true");
  }
  return out;
}

function fail(message) {
  console.error(`[smoke-real] ${message}`);
  process.exit(2);
}
