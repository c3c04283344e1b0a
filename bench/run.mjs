#!/usr/bin/env node
/**
 * `npm run bench`: starts a Vite dev server on 127.0.0.1, opens
 * bench/pipeline.html in headless Chromium (Debian's, with the flags of
 * vite.config.ts), runs every measurement in that one page, prints a table and
 * writes bench/results.json. Every figure is a ratio or a side-by-side pair
 * from the same run: these machines are noisy, absolute numbers are not
 * comparable between runs.
 *
 * Options (environment): BENCH_TOKENS (100000: at ~400k tok/s a shorter run lasts tens of ms, below this machine's noise), BENCH_RUNS (5), BENCH_TTFT (200),
 * BENCH_CACHE_MB (the cache bench's default model size), BENCH_SKIP=cache,download,parsers,ttft,pipeline,shared,promptcache,speculative,batching,gguf,
 * BENCH_GGUF_TOKENS (256: tokens per GGUF request), BENCH_GGUF_RUNS (5),
 * BENCH_ONLY=speculative (or any comma-separated list of those names: run only them; the browser starts only for sections that need it),
 * BENCH_SHARED_TOKENS (5 × BENCH_TOKENS).
 * First load (`download`): BENCH_DOWNLOAD_MB (256), BENCH_DOWNLOAD_ROUNDS (3), BENCH_THROTTLE_MBPS ("10,100"; "" skips),
 * BENCH_DOWNLOAD_BACKENDS ("indexeddb,cache,opfs": the library's backends timed; the goals need indexeddb and cache),
 * BENCH_THROTTLE_BACKEND (the paced lines' backend, default indexeddb), BENCH_THROTTLE_EVENTS=1 (every progress report of the
 * paced downloads into results.json: [ms since the first byte, bytes, total, ETA s, actual s left], to judge an ETA estimator offline),
 * BENCH_WEBLLM_LIB=path/to/model-lib.wasm (a real web-llm model library: web-llm instantiates it before it
 * fetches weights, so its own loader is timed only with one; it must be one web-llm 0.2.86's runtime instantiates: libraries
 * built against an older TVM runtime fail with "Cannot find global function ffi.ModuleGetFunction" before any weight is fetched).
 * With it, the batching section also measures the KV memory one row takes: the library's paged KV cache created on WebGPU
 * (SwiftShader will do) for 1 and BENCH_KV_ROWS (4) rows, no weights loaded (bench/kv-memory.ts); without it that line says so.
 */
import { readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { basename, dirname, resolve } from "node:path";
import { createServer } from "vite";
import { chromium } from "playwright";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TOKENS = Number(process.env.BENCH_TOKENS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const TTFT_REQUESTS = Number(process.env.BENCH_TTFT ?? 200);
const CACHE_MB = process.env.BENCH_CACHE_MB ? Number(process.env.BENCH_CACHE_MB) : undefined;
const SECTIONS = ["pipeline", "ttft", "parsers", "cache", "download", "shared", "promptcache", "speculative", "batching", "gguf"];
/** Sections measured in the browser page; the others run in Node. */
const IN_PAGE = ["pipeline", "ttft", "parsers", "cache", "download", "shared", "gguf"];
const only = (process.env.BENCH_ONLY ?? "").split(",").filter(Boolean);
const skip = new Set([...(process.env.BENCH_SKIP ?? "").split(",").filter(Boolean), ...(only.length > 0 ? SECTIONS.filter((s) => !only.includes(s)) : [])]);

const log = (...args) => console.error("[bench]", ...args);
const fmt = (n, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? "—" : Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const pct = (ratio) => `${fmt(ratio * 100, 1)} %`;

async function main() {
  const server = await createServer({
    root,
    configFile: resolve(root, "vite.config.ts"),
    // A cache of its own, so the bench never re-optimizes under a running vitest.
    cacheDir: resolve(root, "node_modules/.vite-bench"),
    logLevel: "warn",
    clearScreen: false,
    server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false },
    // Pre-bundle up front: a dependency discovered mid-run would reload the page.
    optimizeDeps: { entries: ["bench/pipeline.html", "bench/*.ts"], include: ["@mlc-ai/web-llm", "webllm-0279", "comlink", "idb-keyval", "openai-v7", "hash-wasm"] },
  });
  await server.listen();
  const base = server.resolvedUrls.local[0].replace(/\/$/, "");
  const { chromiumArgs } = await server.ssrLoadModule("/vite.config.ts");
  log(`vite on ${base}`);

  // The batching section's measured KV memory per row creates a model library's cache on WebGPU, in the page.
  const needsPage = IN_PAGE.some((s) => !skip.has(s)) || (!skip.has("batching") && !!process.env.BENCH_WEBLLM_LIB);
  const browser = needsPage ? await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: [...chromiumArgs, "--enable-precise-memory-info"] }) : null;
  const results = { date: new Date().toISOString(), machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, node: process.version, chromium: browser?.version() ?? null }, tokens: TOKENS, runs: RUNS };
  const rows = [];
  let artifactServer = null;
  try {
    const page = browser ? await browser.newPage() : null;
    if (page) {
      page.on("pageerror", (error) => log("page error:", error.message));
      page.setDefaultTimeout(0);
      await page.goto(`${base}/bench/pipeline.html`);
      await page.waitForFunction(() => window.bench?.ready === true, null, { timeout: 300_000 });
    }

    // ── 1. pipeline ceiling ────────────────────────────────────────────────
    if (!skip.has("pipeline")) {
      log(`pipeline: ${TOKENS} tokens × ${RUNS} runs per variant…`);
      const p = await page.evaluate((options) => window.bench.pipeline(options), { tokens: TOKENS, runs: RUNS });
      const t = p.tokensPerS;
      results.pipeline = {
        ...p,
        ratios: {
          workerVsBaseline: t.worker / t.baseline,
          workerVsWebllm: t.worker / t.webllm,
          sdkVsWorker: t.sdk / t.worker,
          rawSseVsWorker: t.rawSse / t.worker,
          sdkVsRawSse: t.sdk / t.rawSse,
          inProcessVsBaseline: t.inProcess / t.baseline,
          responsesVsChatWorker: t.responsesWorker / t.worker,
          responsesSdkVsChatSdk: t.responsesSdk / t.sdk,
        },
        goals: {
          "worker ≥ 95 % of bare postMessage": t.worker >= 0.95 * t.baseline,
          "worker faster than web-llm's protocol": t.worker > t.webllm,
          "SDK over client.fetch ≥ 80 % of worker stream": t.sdk >= 0.8 * t.worker,
          "Responses stream through the worker ≥ 90 % of the chat stream": t.responsesWorker >= 0.9 * t.worker,
        },
        webllmNote: "web-llm 0.2.86's real WebWorkerMLCEngine ↔ WebWorkerMLCEngineHandler; the handler's MLCEngine is replaced by a stand-in whose reload() loads nothing and whose chatCompletion() yields the same scripted tokens as chunks (bench/webllm-worker.ts)",
      };
      const r = results.pipeline.ratios;
      rows.push(["Pipeline ceiling (tokens/s reaching the consumer, median)", "", ""]);
      rows.push(["  bare postMessage per token (worker → page)", `${fmt(t.baseline)} tok/s`, "baseline"]);
      rows.push(["  web-llm WebWorkerMLCEngine protocol (1 round trip/chunk)", `${fmt(t.webllm)} tok/s`, pct(t.webllm / t.baseline)]);
      rows.push(["  (a) in-process client (EngineHost in this thread)", `${fmt(t.inProcess)} tok/s`, pct(r.inProcessVsBaseline)]);
      rows.push(["  (b) worker + createClient stream", `${fmt(t.worker)} tok/s`, pct(r.workerVsBaseline)]);
      rows.push(["  client.fetch + SSE, minimal parser (no SDK)", `${fmt(t.rawSse)} tok/s`, `${pct(r.rawSseVsWorker)} of (b)`]);
      rows.push(["  (c) client.fetch + SSE + openai SDK v7", `${fmt(t.sdk)} tok/s`, `${pct(r.sdkVsWorker)} of (b), ${pct(r.sdkVsRawSse)} of no-SDK`]);
      rows.push(["  goal (b) ≥ 95 % of bare", pct(r.workerVsBaseline), results.pipeline.goals["worker ≥ 95 % of bare postMessage"] ? "met" : "MISSED"]);
      rows.push(["  goal (b) faster than web-llm protocol", `${fmt(r.workerVsWebllm, 2)}×`, results.pipeline.goals["worker faster than web-llm's protocol"] ? "met" : "MISSED"]);
      rows.push(["  goal (c) ≥ 80 % of (b)", pct(r.sdkVsWorker), results.pipeline.goals["SDK over client.fetch ≥ 80 % of worker stream"] ? "met" : "MISSED"]);
      rows.push(["  (d) worker + client.responses stream (output_text deltas)", `${fmt(t.responsesWorker)} tok/s`, `${pct(r.responsesVsChatWorker)} of (b)`]);
      rows.push(["  (e) client.fetch + SSE + openai SDK v7 responses stream", `${fmt(t.responsesSdk)} tok/s`, `${pct(r.responsesSdkVsChatSdk)} of (c)`]);
      rows.push(["  goal (d) ≥ 90 % of (b)", pct(r.responsesVsChatWorker), results.pipeline.goals["Responses stream through the worker ≥ 90 % of the chat stream"] ? "met" : "MISSED"]);
    }

    // ── 2. time to first token ─────────────────────────────────────────────
    if (!skip.has("ttft")) {
      log(`ttft: ${TTFT_REQUESTS} requests in-process and through the worker…`);
      const t = await page.evaluate((requests) => window.bench.ttft({ requests }), TTFT_REQUESTS);
      results.ttft = { ...t, workerOverheadMs: t.workerMs - t.inProcessMs };
      rows.push([`Time to first token, zero-delay engine (median of ${t.requests}; timer resolution ~0.1 ms)`, "", ""]);
      rows.push(["  in-process: create() → first chunk", `${fmt(t.inProcessMs, 2)} ms`, `p90 ${fmt(t.inProcessP90Ms, 2)} ms`]);
      rows.push(["  worker: create() → first chunk", `${fmt(t.workerMs, 2)} ms`, `p90 ${fmt(t.workerP90Ms, 2)} ms`]);
      rows.push(["  worker overhead", `+${fmt(results.ttft.workerOverheadMs, 2)} ms`, ""]);
    }

    // ── 3. parsers ─────────────────────────────────────────────────────────
    if (!skip.has("parsers")) {
      rows.push(["Parsers: 1-char deltas vs one delta, 256 KB tool-call reply", "", ""]);
      if (!existsSync(resolve(root, "bench/parser-ratio.ts"))) {
        results.parsers = { available: false };
        rows.push(["  measureParserRatio()", "not available yet", ""]);
      } else {
        log("parsers: measureParserRatio()…");
        try {
          const value = await page.evaluate(() => window.bench.callExport("/bench/parser-ratio.ts", "measureParserRatio"));
          results.parsers = { available: true, result: value };
          for (const [label, figure, note] of describeResult(value, "ratio", (ratio) => (ratio <= 3 ? "≤ 3: met" : "> 3: MISSED"))) rows.push([`  ${label}`, figure, note]);
        } catch (error) {
          results.parsers = { available: true, error: String(error?.message ?? error) };
          rows.push(["  measureParserRatio()", "failed", String(error?.message ?? error).slice(0, 80)]);
        }
      }
    }

    // ── 4. cache ───────────────────────────────────────────────────────────
    if (!skip.has("cache")) {
      rows.push(["Weight cache (generated model from a loopback server)", "", ""]);
      if (!existsSync(resolve(root, "bench/cache.ts")) || !existsSync(resolve(root, "test/support/artifact-server.ts"))) {
        results.cache = { available: false };
        rows.push(["  benchCache()", "not available yet", ""]);
      } else {
        log("cache: benchCache()…");
        try {
          const { startArtifactServer } = await server.ssrLoadModule("/test/support/artifact-server.ts");
          artifactServer = await startArtifactServer();
          const options = { serverUrl: artifactServer.url, ...(CACHE_MB ? { modelBytes: CACHE_MB * 1024 * 1024 } : {}) };
          const cacheRows = await page.evaluate((o) => window.bench.callExport("/bench/cache.ts", "benchCache", o), options);
          results.cache = { available: true, rows: cacheRows };
          for (const row of cacheRows) {
            const mb = (bytes) => (bytes === null ? "—" : `${fmt(bytes / 1024 / 1024, 1)} MB`);
            rows.push([`  ${row.backend}: download / write / read`, `${fmt(row.downloadMBps)} / ${fmt(row.writeMBps)} / ${fmt(row.readMBps)} MB/s`, `model ${mb(row.modelBytes)}`]);
            rows.push([`  ${row.backend}: peak JS heap / peak buffered`, `${mb(row.peakHeapBytes)} / ${mb(row.peakBufferedBytes)}`, row.peakHeapBytes === null ? "" : `${pct(row.peakHeapBytes / row.modelBytes)} of model`]);
          }
        } catch (error) {
          results.cache = { available: true, error: String(error?.message ?? error) };
          rows.push(["  benchCache()", "failed", String(error?.message ?? error).slice(0, 80)]);
        }
      }
    }

    // ── 4b. first load: raw fetch vs the library per backend vs web-llm's loader ──
    if (!skip.has("download")) {
      rows.push(["First load: shards of a generated model from a loopback server (median MB/s)", "", ""]);
      log("download: raw fetch, library per backend, web-llm's loader…");
      let downloadServer = null;
      try {
        const { startArtifactServer } = await server.ssrLoadModule("/test/support/artifact-server.ts");
        const libPath = process.env.BENCH_WEBLLM_LIB;
        downloadServer = await startArtifactServer(0, libPath ? { modelLib: await readFile(libPath) } : {});
        const budget = 64 * 1024 * 1024;
        const options = {
          serverUrl: downloadServer.url,
          modelBytes: Number(process.env.BENCH_DOWNLOAD_MB ?? 256) * 1024 * 1024,
          rounds: Number(process.env.BENCH_DOWNLOAD_ROUNDS ?? 3),
          maxBufferedBytes: budget,
          webllmBackends: libPath ? ["indexeddb", "cache"] : [],
          ...(process.env.BENCH_DOWNLOAD_BACKENDS ? { backends: process.env.BENCH_DOWNLOAD_BACKENDS.split(",").filter(Boolean) } : {}),
        };
        const loadBefore = loadavg()[0];
        const d = await page.evaluate((o) => window.bench.callExport("/bench/download.ts", "benchDownload", o), options);
        // Throughput on a shared machine moves with its other load: printed beside the figures.
        rows.push([`  load average (1 min) before / after`, `${fmt(loadBefore, 2)} / ${fmt(loadavg()[0], 2)}`, `${cpus().length} CPUs`]);
        const raw = d.find((r) => r.variant.startsWith("raw fetch (ceiling)"));
        const goals = {};
        for (const r of d) {
          const share = raw && r !== raw ? `${pct(r.MBps / raw.MBps)} of raw` : r === raw ? "ceiling" : "";
          const extra = (r.peakBufferedBytes !== undefined ? `, peak buffered ${fmt(r.peakBufferedBytes / 1024 / 1024, 1)} MB, ≤ ${r.peakConcurrency} streams` : "") + (r.cpu ? `, CPU s/100 MB ${fmt(r.cpu.browser, 2)} browser + ${fmt(r.cpu.server, 2)} server${r.variant.startsWith("web-llm") ? " (with its engine's start/stop)" : ""}` : "");
          rows.push([`  ${r.variant}`, r.error ? "failed" : `${fmt(r.MBps)} MB/s`, r.error ? r.error.slice(0, 90) : `${share}${extra} (runs ${r.runs.map((x) => fmt(x)).join(", ")})`]);
        }
        // What this machine's cores allow: a verified download does at least the store's floor plus MD5 of every byte.
        // A lower bound on the work (the Cache API floor never even reads the bytes into JavaScript), so "at most" is an upper bound.
        const md5Row = d.find((r) => r.variant === "raw fetch + MD5 in WebAssembly on the thread");
        const limits = {};
        const missedBecause = {};
        for (const backend of ["indexeddb", "cache"]) {
          const floor = d.find((r) => r.variant.startsWith(`floor → ${backend}:`));
          if (!floor?.cpu || !md5Row?.cpu || !raw?.cpu) continue;
          const md5 = Math.max(0, md5Row.cpu.browser - raw.cpu.browser);
          const least = floor.cpu.browser + md5 + floor.cpu.server;
          const most = (cpus().length * 100) / least;
          limits[backend] = { leastCpuPer100MB: least, mostMBps: most, floorCpu: floor.cpu, md5CpuPer100MB: md5 };
          rows.push([`  ${backend}: least CPU a verified download takes`, `${fmt(least, 2)} s/100 MB`, `store floor ${fmt(floor.cpu.browser, 2)} + MD5 ${fmt(md5, 2)} + server ${fmt(floor.cpu.server, 2)}: at most ${fmt(most)} MB/s on ${cpus().length} CPUs; 75 % of raw is ${fmt(0.75 * raw.MBps)}`]);
        }
        for (const backend of ["indexeddb", "cache"]) {
          const lib = d.find((r) => r.variant === `library → ${backend}`);
          const peer = d.find((r) => r.variant === `web-llm 0.2.86 loader → ${backend}`);
          if (!lib || !raw) continue;
          const share = `${backend}: ≥ 75 % of raw fetch`;
          goals[share] = lib.MBps >= 0.75 * raw.MBps;
          goals[`${backend}: peak buffered ≤ budget`] = lib.peakBufferedBytes <= budget;
          const limit = limits[backend];
          // A miss the cores cannot carry even at the floor, or against a peer that does the floor's work, says so.
          if (limit && limit.mostMBps < 0.75 * raw.MBps) missedBecause[share] = `beyond these ${cpus().length} CPUs: at most ${fmt(limit.mostMBps)} MB/s verified`;
          if (peer && !peer.error) {
            const ahead = `${backend}: ahead of web-llm's loader`;
            goals[ahead] = lib.MBps > peer.MBps;
            if (limit) missedBecause[ahead] = "web-llm hashes no shard: its work is the floor row's";
          }
        }
        if (!libPath) rows.push(["  web-llm 0.2.86 loader", "not run", "set BENCH_WEBLLM_LIB to a web-llm model library (.wasm)"]);
        results.download = { available: true, rows: d, goals, limits };
        const rates = (process.env.BENCH_THROTTLE_MBPS ?? "10,100").split(",").filter(Boolean).map(Number);
        if (rates.length) {
          log(`download: throttled line at ${rates.join(", ")} MB/s…`);
          const paceLoad = loadavg()[0];
          const t = await page.evaluate((o) => window.bench.callExport("/bench/download.ts", "benchThrottled", o), { serverUrl: downloadServer.url, ratesMBps: rates, maxBufferedBytes: budget, keepEvents: process.env.BENCH_THROTTLE_EVENTS === "1", ...(process.env.BENCH_THROTTLE_BACKEND ? { backend: process.env.BENCH_THROTTLE_BACKEND } : {}) });
          rows.push([`  paced lines: load average (1 min) before / after`, `${fmt(paceLoad, 2)} / ${fmt(loadavg()[0], 2)}`, `library → ${process.env.BENCH_THROTTLE_BACKEND ?? "indexeddb"}`]);
          results.download.throttled = t;
          for (const r of t) {
            rows.push([`  line paced at ${r.lineMBps} MB/s (${fmt(r.modelBytes / 1024 / 1024)} MB): raw / library`, `${fmt(r.rawMBps, 1)} / ${fmt(r.libraryMBps, 1)} MB/s`, `reported rate ${fmt(r.reportedMBps, 1)} MB/s, peak buffered ${fmt(r.peakBufferedBytes / 1024 / 1024, 1)} MB`]);
            rows.push([`    ETA after 5 %: worst error / median error`, `${pct(r.etaWorstError)} / ${pct(r.etaMedianError)}`, r.etaWorstError <= 0.1 ? "≤ 10 % of the download: met" : "> 10 %: MISSED"]);
            goals[`${r.lineMBps} MB/s: library ≥ 90 % of the line`] = r.libraryMBps >= 0.9 * r.lineMBps;
            goals[`${r.lineMBps} MB/s: ETA within 10 % after the first 5 %`] = r.etaWorstError <= 0.1;
          }
        }
        for (const [goal, met] of Object.entries(goals)) rows.push([`  goal ${goal}`, "", met ? "met" : missedBecause[goal] ? `MISSED (${missedBecause[goal]})` : "MISSED"]);
      } catch (error) {
        results.download = { available: true, error: String(error?.message ?? error) };
        rows.push(["  benchDownload()", "failed", String(error?.message ?? error).slice(0, 80)]);
      } finally {
        await downloadServer?.close?.();
      }
    }

    // ── 5. shared worker vs dedicated worker ───────────────────────────────
    if (!skip.has("shared")) {
      rows.push(["One engine for every tab: shared vs dedicated worker stream", "", ""]);
      // Five times the pipeline's tokens: a 20k-token run lasts ~50 ms here, too short to rise above this machine's noise.
      const sharedTokens = Number(process.env.BENCH_SHARED_TOKENS ?? 5 * TOKENS);
      const sharedRuns = Math.max(RUNS, 9);
      log(`shared: ${sharedTokens} tokens × ${sharedRuns} rounds, dedicated and shared worker…`);
      try {
        const s = await page.evaluate((o) => window.bench.callExport("/bench/shared-worker.ts", "benchSharedWorker", o), { tokens: sharedTokens, runs: sharedRuns });
        results.sharedWorker = { ...s, goals: { "shared ≥ 90 % of dedicated (paired)": s.pairedRatio >= 0.9 } };
        rows.push(["  dedicated worker (worker: true)", `${fmt(s.dedicated)} tok/s`, "baseline"]);
        rows.push([`  shared worker (worker: "shared"; served by ${s.sharedKind})`, `${fmt(s.shared)} tok/s`, pct(s.ratio)]);
        rows.push(["  goal shared ≥ 90 % of dedicated (median of paired runs)", pct(s.pairedRatio), s.pairedRatio >= 0.9 ? "met" : "MISSED"]);
      } catch (error) {
        results.sharedWorker = { error: String(error?.message ?? error) };
        rows.push(["  benchSharedWorker()", "failed", String(error?.message ?? error).slice(0, 80)]);
      }
    }

    // ── 6. prompt cache: chat-app traces on the scripted engine (Node; token counts, not timings) ──
    if (!skip.has("promptcache")) {
      rows.push(["Prompt cache: cached / prompt tokens per request (scripted engine, openai SDK v6)", "", ""]);
      log("promptcache: chat-app traces…");
      try {
        const { benchPromptCache } = await server.ssrLoadModule("/bench/prompt-cache.ts");
        const p = await benchPromptCache();
        results.promptCache = p;
        for (const r of p.requests) rows.push([`  ${r.trace}: ${r.step}`, `${fmt(r.cached)} / ${fmt(r.prompt)}`, r.cold ? "cold start" : pct(r.cached / r.prompt)]);
        const off = await benchPromptCache({ promptCache: false });
        results.promptCache.off = off.summary;
        for (const t of p.summary) {
          const goal = t.trace.startsWith("agent") ? 0.9 : 0.85;
          const without = off.summary.find((o) => o.trace === t.trace);
          rows.push([`  ${t.trace}: all after the cold start (lowest request)`, `${pct(t.ratioAfterFirst)} (${pct(t.minAfterFirst)})`, t.minAfterFirst >= goal ? `≥ ${pct(goal)}: met` : `< ${pct(goal)}: MISSED`]);
          rows.push([`    same trace, promptCache: false (web-llm's own reuse)`, `${pct(without.ratioAfterFirst)} (${pct(without.minAfterFirst)})`, ""]);
        }
      } catch (error) {
        results.promptCache = { error: String(error?.message ?? error) };
        rows.push(["  benchPromptCache()", "failed", String(error?.message ?? error).slice(0, 80)]);
      }
    }

    // ── 7. speculative decoding: app tasks on the scripted engine (Node; pass counts, not timings) ──
    if (!skip.has("speculative")) {
      rows.push(["Speculative decoding: forward passes per generated token (scripted engine; speculation off = 1.00)", "", ""]);
      log("speculative: tasks with speculation on and off…");
      try {
        const { benchSpeculative, SPECULATIVE_GOALS } = await server.ssrLoadModule("/bench/speculative.ts");
        const s = await benchSpeculative();
        results.speculative = s;
        for (const t of s.tasks) {
          const goal = SPECULATIVE_GOALS[t.kind];
          const met = t.sameOutput && t.passesPerToken <= goal.passesPerToken && t.rejectedPerToken <= goal.rejectedPerToken;
          const target = `≤ ${fmt(goal.passesPerToken, 2)}${goal.rejectedPerToken < Infinity ? `, rejected ≤ ${pct(goal.rejectedPerToken)}` : ""}`;
          rows.push([`  ${t.task}`, `${fmt(t.passesPerToken, 3)} (${t.passes}/${t.tokens})`, `${target}: ${met ? "met" : "MISSED"}`]);
          rows.push([`    drafted / accepted / rejected per token`, `${t.draftTokens} / ${t.acceptedDraftTokens} / ${pct(t.rejectedPerToken)}`, t.sameOutput ? "output = speculation off" : "OUTPUT DIFFERS"]);
        }
        // Issue 34: drafts sized by device cost, held to plain prompt lookup, grammar jump-forward.
        const { benchDraftCosts, benchAgainstPlainLookup, benchJumpForward, recordedTasks } = await server.ssrLoadModule("/bench/speculative.ts");
        const recorded = await recordedTasks();
        const profiles = await benchDraftCosts(recorded);
        const lookup = await benchAgainstPlainLookup(recorded);
        const jump = await benchJumpForward();
        results.speculativeCosts = { profiles, lookup, jump };
        rows.push(["Speculative decoding: tokens per ms by device profile (recorded tasks; off / expected / measured)", "", ""]);
        for (const p of profiles) {
          rows.push([`  ${p.device}`, `${fmt(p.off * 1000, 3)} / ${fmt(p.expected * 1000, 3)} / ${fmt(p.measured * 1000, 3)} per s`, `×${fmt(p.measured / p.off, 2)}; slowest task ×${fmt(p.off > 0 ? 1 / p.worstTask.ratio : 0, 3)} (${p.worstTask.task})`]);
        }
        rows.push(["Speculative decoding: passes per token, ours against plain prompt lookup (n = 3..1, k = 8)", "", ""]);
        for (const l of lookup) rows.push([`  ${l.task}`, `${fmt(l.ours, 3)} / ${fmt(l.plain, 3)}`, l.ours <= l.plain + 0.03 ? "within 0.03 or better" : `BEHIND by ${fmt(l.ours - l.plain, 3)}`]);
        rows.push(["  forced set_unit call: passes off / without jump-forward / with", `${jump.passesOff} / ${jump.passesWithout} / ${jump.passesWith} of ${jump.tokens} tokens`, `${jump.jumpForwardTokens} jump-forward tokens`]);
      } catch (error) {
        results.speculative = { error: String(error?.message ?? error) };
        rows.push(["  benchSpeculative()", "failed", String(error?.message ?? error).slice(0, 80)]);
      }
    }

    // ── 8. continuous batching: concurrent streams on the scripted engine (Node; one pass costs one step) ──
    if (!skip.has("batching")) {
      rows.push(["Continuous batching: concurrent 64-token streams (scripted engine, a pass = one 2 ms step whatever its rows)", "", ""]);
      log("batching: 1, 2, 4, 8 streams, batched and one at a time…");
      try {
        const { benchBatching } = await server.ssrLoadModule("/bench/batching.ts");
        const b = await benchBatching();
        results.batching = b;
        for (const streams of [1, 2, 4, 8]) {
          const batched = b.lines.find((l) => l.streams === streams && l.rowCap > 1);
          const single = b.lines.find((l) => l.streams === streams && l.rowCap === 1);
          rows.push([`  ${streams} stream${streams > 1 ? "s" : ""}: passes, batched / one at a time`, `${batched.passes} / ${single.passes}`, `mean rows ${fmt(batched.meanRows, 2)}`]);
          rows.push([`    tokens/s, batched / one at a time`, `${fmt(batched.tokensPerS)} / ${fmt(single.tokensPerS)}`, `${fmt(batched.tokensPerS / single.tokensPerS, 2)}×`]);
        }
        const late = b.lateArrival;
        rows.push(["  late arrival (4 streams of 256 decoding): first token / alone", `${late.ttftMs} / ${late.aloneTtftMs} ms`, `the others end ${late.othersEndMs} ms after it arrived`]);
      } catch (error) {
        results.batching = { error: String(error?.message ?? error) };
        rows.push(["  benchBatching()", "failed", String(error?.message ?? error).slice(0, 80)]);
      }
      // Memory per row is the model library's KV cache on a real device: measured only with a real library.
      const libPath = process.env.BENCH_WEBLLM_LIB;
      const kvRows = Number(process.env.BENCH_KV_ROWS ?? 4);
      if (!libPath) {
        results.batchingKvMemory = { available: false };
        rows.push(["  KV memory per row, measured", "not run", "set BENCH_WEBLLM_LIB to a web-llm model library (.wasm): a row's KV room is that library's paged cache, allocated on WebGPU"]);
      } else {
        log(`batching: KV memory per row of ${libPath}, caches for 1 and ${kvRows} rows on WebGPU…`);
        let kvServer = null;
        try {
          const { startArtifactServer } = await server.ssrLoadModule("/test/support/artifact-server.ts");
          kvServer = await startArtifactServer(0, { modelLib: await readFile(libPath) });
          const m = await page.evaluate((o) => window.bench.callExport("/bench/kv-memory.ts", "benchKvMemory", o), { serverUrl: kvServer.url, rows: kvRows });
          results.batchingKvMemory = { available: true, lib: libPath, ...m };
          const mib = (bytes) => `${fmt(bytes / 2 ** 20, 1)} MiB`;
          rows.push([`  KV memory per row, measured (${basename(libPath)} on web-llm ${m.webllm}'s runtime, ${fmt(m.tokensPerRow)} tokens a row)`, mib(m.bytesPerRow), `caches for 1 / ${m.rows} rows: ${mib(m.bytesOneRow)} / ${mib(m.bytesRows)} (GPU buffers tvmjs allocated)`]);
          for (const why of m.skipped) rows.push(["    not measured on", why.slice(0, 40), why.slice(40, 160)]);
          rows.push(["    as client.stats().batching.kv_bytes_per_row computes it", m.statsBytesPerRow === null ? "—" : `${fmt(m.statsBytesPerRow)} B`, `${fmt(m.bytesPerRow)} B from the two caches`]);
        } catch (error) {
          results.batchingKvMemory = { available: true, lib: libPath, error: String(error?.message ?? error) };
          rows.push(["  KV memory per row, measured", "failed", String(error?.message ?? error).slice(0, 120)]);
        } finally {
          await kvServer?.close?.();
        }
      }
    }

    // ── 9. the GGUF engine (wllama) against wllama's own API, in the page ──
    if (!skip.has("gguf")) {
      const tokens = Number(process.env.BENCH_GGUF_TOKENS ?? 256);
      const runs = Number(process.env.BENCH_GGUF_RUNS ?? 5);
      rows.push([`GGUF engine: tiny generated GGUF on the real @wllama/wllama, ${tokens}-token greedy streams (median of ${runs}, routes interleaved)`, "", ""]);
      log("gguf: the library (worker, in-process) against wllama's own API…");
      let ggufServer = null;
      try {
        const { startGgufServer } = await server.ssrLoadModule("/test/support/gguf-server.ts");
        ggufServer = await startGgufServer();
        const g = await page.evaluate((o) => window.bench.callExport("/bench/gguf.ts", "benchGguf", o), { serverUrl: ggufServer.url, tokens, runs });
        results.gguf = g;
        for (const r of g.routes) rows.push([`  ${r.route === "direct" ? "wllama's own createChatCompletion" : `library, ${r.route}`}`, `${fmt(r.tokensPerS)} tok/s`, `${r.completionTokens} tokens, finish ${r.finish}`]);
        rows.push(["  goal: library (worker) ≥ 0.9 of wllama's own", `${fmt(g.workerVsDirect, 2)}×`, g.workerVsDirect >= 0.9 ? "met" : "MISSED"]);
        rows.push(["  library in-process / wllama's own", `${fmt(g.inProcessVsDirect, 2)}×`, g.sameText ? "same text on every route" : "TEXT DIFFERS between routes"]);
        rows.push([`  first load of the ${fmt(g.firstLoad.fileBytes / 1024)} KiB GGUF: library (cache + load) / fetch + loadModel`, `${fmt(g.firstLoad.libraryMs)} / ${fmt(g.firstLoad.directMs)} ms`, `${fmt(g.firstLoad.libraryMs / g.firstLoad.directMs, 2)}×`]);
      } catch (error) {
        results.gguf = { error: String(error?.message ?? error) };
        rows.push(["  benchGguf()", "failed", String(error?.message ?? error).slice(0, 80)]);
      } finally {
        await ggufServer?.close();
      }
    }
  } finally {
    await artifactServer?.close?.();
    await browser?.close();
    await server.close();
  }

  printTable(rows, results);
  await writeFile(resolve(root, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log("\nwrote bench/results.json");
}

/** A figure: integers as they are, other numbers with two decimals. */
const figure = (v) => (typeof v === "number" ? fmt(v, Number.isInteger(v) ? 0 : 2) : String(JSON.stringify(v)).slice(0, 60));

/**
 * Table rows for a result whose shape another module decides: a number, or an
 * object of figures whose object-valued entries (e.g. per format) get a row each.
 */
function describeResult(value, name, judge) {
  if (typeof value === "number") return [[name, figure(value), judge(value)]];
  if (!value || typeof value !== "object") return [[name, String(value), ""]];
  const rows = [];
  for (const [key, v] of Object.entries(value)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const [sub, inner] of Object.entries(v)) {
        if (inner && typeof inner === "object" && typeof inner.ratio === "number") {
          const rest = Object.entries(inner).filter(([k, x]) => k !== "ratio" && typeof x === "number").map(([k, x]) => `${k} ${figure(x)}`).join(", ");
          rows.push([`${key} ${sub}: ratio`, figure(inner.ratio), `${judge(inner.ratio)}${rest ? ` (${rest})` : ""}`]);
        } else rows.push([`${key} ${sub}`, figure(inner), ""]);
      }
    } else rows.push([key, figure(v), typeof v === "number" && /ratio/i.test(key) ? judge(v) : ""]);
  }
  return rows;
}

function printTable(rows, results) {
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (r) => `${String(r[0]).padEnd(widths[0])}  ${String(r[1]).padStart(widths[1])}  ${String(r[2]).padEnd(widths[2])}`.trimEnd();
  console.log(`\nwebgpu-openai bench — ${results.date} — ${results.machine.cpus} CPUs, Node ${results.machine.node}${results.machine.chromium ? `, Chromium ${results.machine.chromium} (headless)` : ""}\n`);
  for (const row of rows) console.log(line(row));
  if (results.pipeline) console.log(`\nweb-llm protocol: ${results.pipeline.webllmNote}.`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
