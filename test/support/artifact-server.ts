/**
 * A local HTTP server (127.0.0.1 only) serving generated models in MLC layout
 * for the cache tests and the cache benchmark: `mlc-chat-config.json`,
 * `tensor-cache.json` (shard names, sizes, md5sum), `params_shard_*.bin`,
 * `tokenizer.json` and a dummy model library. Shard bytes are generated per
 * request from a seed (a 256 MB model costs no memory). It counts requests
 * and can drop a connection mid-shard, corrupt a file once, or be "stopped"
 * (every request is counted, then its connection destroyed).
 *
 * Control API (JSON, CORS open so the page under test can drive it):
 *   POST /__control/model  {shards?, shardBytes?, tokenizerBytes?, wasmBytes?, md5?}
 *        → {name, baseUrl, record}   (record: a ModelRecord for this server)
 *   POST /__control/fault?name=…  {stopped?, dropFrom?, corruptOnce?: string[], delayMs?, rateBytesPerS?, stallAfter?, lyingLength?}
 *   GET  /__control/stats?name=…   → {total, byFile: {file: count}}
 *   GET  /__control/cpu            → {self, children}: CPU seconds of this process and of the processes it started (Linux), or null
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";

export interface ModelSpec {
  shards: number;
  shardBytes: number;
  tokenizerBytes: number;
  wasmBytes: number;
  /** Declare md5sum per shard in tensor-cache.json (MLC does). */
  md5: boolean;
  /** Serve a model package manifest (`mlc-model-manifest.json`, as gemma-4 has) placing the config under config/ and the weights under weights/. */
  packageManifest: boolean;
  /** A hostile index: these `dataPath`s in tensor-cache.json instead of `params_shard_<i>.bin` (one shard each). */
  dataPaths?: string[];
  /** A hostile package manifest: these `chat_config` / `weights.manifest` paths instead of the ones served. */
  packagePaths?: { chat_config?: string; weights_manifest?: string };
  /** Serve a minimal tokenizer.json that a real tokenizer library parses (tokenizerBytes is then ignored), as web-llm's own loader needs. */
  validTokenizer: boolean;
  /** Serve the model library the server was started with (`modelLib`) instead of a dummy wasm. */
  realLib: boolean;
}

interface Fault {
  stopped: boolean;
  /** Shards with index ≥ dropFrom send half their body, then the connection drops. */
  dropFrom: number | null;
  /** Files served with flipped bytes (same length) on their next request only. */
  corruptOnce: Set<string>;
  /** Wait before answering each shard request (makes a download last long enough to overlap another). */
  delayMs: number;
  /** Pace every shard byte of this model through one line of this speed (all connections share it); null: as fast as possible. */
  rateBytesPerS: number | null;
  /** Shards send this many bytes, then nothing more while the connection stays open (a stalled host). */
  stallAfter: number | null;
  /** Declare this content-length for tokenizer.json while sending its real (short) body, then close the connection. */
  lyingLength: number | null;
}

/** A shared line: each chunk waits for its turn at the line's rate. */
interface Line {
  freeAt: number;
}

interface ServedModel {
  name: string;
  spec: ModelSpec;
  fault: Fault;
  requests: Map<string, number>;
  md5s: string[] | null;
  line: Line;
}

export interface ArtifactServer {
  url: string;
  close(): Promise<void>;
}

const CHUNK = 1 << 16;

/** Deterministic bytes of shard `index` of `name` in [start, end). */
function shardChunk(name: string, index: number, start: number, end: number): Buffer {
  let seed = 2166136261;
  for (const ch of `${name}#${index}`) seed = Math.imul(seed ^ ch.charCodeAt(0), 16777619);
  // A cheap position-keyed mix: any byte can be computed without the ones before it. Written as 32-bit words
  // through a typed array (little-endian, as writeInt32LE wrote them), about 4× faster than writeInt32LE: on a
  // two-core machine the server's own CPU time otherwise caps the loopback line the benchmark measures.
  const words = new Int32Array(Math.ceil((end - start) / 4));
  for (let w = 0, at = start; w < words.length; w++, at += 4) words[w] = Math.imul(at ^ seed, 0x9e3779b1) ^ (at >>> 7);
  if (!LITTLE_ENDIAN) for (let w = 0; w < words.length; w++) words[w] = swap32(words[w]);
  return Buffer.from(words.buffer, 0, end - start);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const swap32 = (x: number) => ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);

function shardMd5(name: string, index: number, bytes: number): string {
  const hash = createHash("md5");
  for (let at = 0; at < bytes; at += 1 << 22) hash.update(shardChunk(name, index, at, Math.min(bytes, at + (1 << 22))));
  return hash.digest("hex");
}

function tensorIndex(model: ServedModel): object {
  const { spec } = model;
  return {
    metadata: { ParamSize: (spec.shards * spec.shardBytes) / 4, ParamBytes: spec.shards * spec.shardBytes, BitsPerParam: 32 },
    records: Array.from({ length: spec.dataPaths?.length ?? spec.shards }, (_, i) => ({
      dataPath: spec.dataPaths?.[i] ?? `params_shard_${i}.bin`,
      format: "raw-shard",
      nbytes: spec.shardBytes,
      records: [{ name: `param_${i}`, shape: [spec.shardBytes / 4], dtype: "float32", format: "raw", nbytes: spec.shardBytes, byteOffset: 0 }],
      ...(model.md5s ? { md5sum: model.md5s[i] } : {}),
    })),
  };
}

function chatConfig(): object {
  return { model_type: "llama", quantization: "q0f32", context_window_size: 4096, prefill_chunk_size: 1024, tokenizer_files: ["tokenizer.json"], conv_template: { name: "test" } };
}

function filler(bytes: number, seed: string): Buffer {
  return Buffer.from(Array.from({ length: bytes }, (_, i) => seed.charCodeAt(i % seed.length)));
}

function tokenizerJson(bytes: number): Buffer {
  const head = '{"version":"1.0","model":{"type":"BPE","vocab":{}},"padding":"';
  const tail = '"}';
  return Buffer.concat([Buffer.from(head), filler(Math.max(0, bytes - head.length - tail.length), "x"), Buffer.from(tail)]);
}

function wasm(bytes: number): Buffer {
  // The wasm header, then one custom section holding padding.
  const header = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  return Buffer.concat([header, filler(Math.max(0, bytes - header.length), "w")]);
}

/** A tokenizer.json a real BPE tokenizer library accepts. */
function validTokenizerJson(): Buffer {
  const model = { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab: { a: 0, b: 1, ab: 2 }, merges: ["a b"] };
  return Buffer.from(JSON.stringify({ version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, model }));
}

/**
 * CPU seconds used so far by this process (the server, and whatever else runs
 * in it) and by its descendant processes (a browser it launched), from
 * /proc; null where there is none. Lets the benchmark tell what a download
 * costs in CPU, which a machine's other load does not change the way it
 * changes the throughput.
 */
function cpuTimes(): { self: number; children: number } | null {
  if (!existsSync("/proc/self/stat")) return null;
  const ticks = 100; // USER_HZ on Linux
  const parents = new Map<number, number>();
  const used = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name, which may hold spaces: state ppid … utime(14) stime(15).
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
      used.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / ticks);
    } catch {
      // The process ended while listed.
    }
  }
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid), hops = 0; at !== undefined && at > 1 && hops < 64; at = parents.get(at), hops++) if (at === process.pid) return true;
    return false;
  };
  let children = 0;
  for (const [pid, seconds] of used) if (descends(pid)) children += seconds;
  const self = process.cpuUsage();
  return { self: (self.user + self.system) / 1e6, children };
}

export interface ArtifactServerOptions {
  /** A real web-llm model library to serve for models created with `realLib` (the benchmark's web-llm peer needs one). */
  modelLib?: Buffer;
}

export async function startArtifactServer(port = 0, options: ArtifactServerOptions = {}): Promise<ArtifactServer> {
  const models = new Map<string, ServedModel>();
  let counter = 0;
  let url = "";

  const send = (res: ServerResponse, status: number, body: Buffer | string, type = "application/json") => {
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body), "access-control-allow-origin": "*", "cache-control": "no-store" });
    res.end(body);
  };
  const readBody = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    return text ? JSON.parse(text) : {};
  };

  function control(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) {
    if (path === "/__control/model" && req.method === "POST") {
      return readBody(req).then((body: Partial<ModelSpec>) => {
        const spec: ModelSpec = { shards: 8, shardBytes: 256 * 1024, tokenizerBytes: 4096, wasmBytes: 16 * 1024, md5: true, packageManifest: false, validTokenizer: false, realLib: false, ...body };
        if (spec.shardBytes % 4 !== 0) return send(res, 400, JSON.stringify({ error: "shardBytes must be a multiple of 4" }));
        const name = `test-model-${Date.now().toString(36)}-${++counter}`;
        // The shards' md5s are computed now, as a static server has its tensor-cache.json ready: computed on its first
        // request instead (over 1 s for 256 MB), they counted in a download's time but not in a raw fetch of the shards.
        const md5s = spec.md5 ? Array.from({ length: spec.shards }, (_, i) => shardMd5(name, i, spec.shardBytes)) : null;
        models.set(name, { name, spec, fault: { stopped: false, dropFrom: null, corruptOnce: new Set(), delayMs: 0, rateBytesPerS: null, stallAfter: null, lyingLength: null }, requests: new Map(), md5s, line: { freeAt: 0 } });
        const record = { model: `${url}/m/${name}`, model_id: name, model_lib: `${url}/lib/${name}.wasm`, overrides: { context_window_size: 4096 }, ...(spec.packageManifest ? { model_manifest: "mlc-model-manifest.json" } : {}) };
        send(res, 200, JSON.stringify({ name, baseUrl: `${url}/m/${name}/resolve/main/`, record, totalBytes: spec.shards * spec.shardBytes }));
      });
    }
    if (path === "/__control/cpu") return send(res, 200, JSON.stringify(cpuTimes()));
    const model = models.get(query.get("name") ?? "");
    if (!model) return send(res, 404, JSON.stringify({ error: "unknown model" }));
    if (path === "/__control/fault" && req.method === "POST") {
      return readBody(req).then((body: Partial<Omit<Fault, "corruptOnce">> & { corruptOnce?: string[] }) => {
        if (body.stopped !== undefined) model.fault.stopped = body.stopped;
        if (body.rateBytesPerS !== undefined) model.fault.rateBytesPerS = body.rateBytesPerS;
        if (body.stallAfter !== undefined) model.fault.stallAfter = body.stallAfter;
        if (body.lyingLength !== undefined) model.fault.lyingLength = body.lyingLength;
        if (body.delayMs !== undefined) model.fault.delayMs = body.delayMs;
        if (body.dropFrom !== undefined) model.fault.dropFrom = body.dropFrom;
        for (const file of body.corruptOnce ?? []) model.fault.corruptOnce.add(file);
        send(res, 200, "{}");
      });
    }
    if (path === "/__control/stats") {
      const byFile = Object.fromEntries(model.requests);
      return send(res, 200, JSON.stringify({ total: [...model.requests.values()].reduce((a, b) => a + b, 0), byFile }));
    }
    return send(res, 404, JSON.stringify({ error: "unknown control path" }));
  }

  async function serveFile(res: ServerResponse, model: ServedModel, file: string) {
    model.requests.set(file, (model.requests.get(file) ?? 0) + 1);
    if (model.fault.stopped) return res.socket?.destroy();
    const corrupt = model.fault.corruptOnce.delete(file);
    const layout = model.spec.packageManifest ? { config: "config/", weights: "weights/" } : { config: "", weights: "" };
    const shard = file.startsWith(layout.weights) ? /^params_shard_(\d+)\.bin$/.exec(file.slice(layout.weights.length)) : null;
    if (shard) {
      const index = Number(shard[1]);
      const { shardBytes } = model.spec;
      if (index >= model.spec.shards) return send(res, 404, "not found", "text/plain");
      if (model.fault.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, model.fault.delayMs));
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": shardBytes, "access-control-allow-origin": "*", "cache-control": "no-store" });
      const drop = model.fault.dropFrom !== null && index >= model.fault.dropFrom;
      const { stallAfter, rateBytesPerS } = model.fault;
      const end = Math.min(drop ? Math.floor(shardBytes / 2) : shardBytes, stallAfter ?? Infinity);
      for (let at = 0; at < end; at += CHUNK) {
        const chunk = shardChunk(model.name, index, at, Math.min(end, at + CHUNK));
        if (corrupt && at <= shardBytes / 2 && shardBytes / 2 < at + CHUNK) chunk[shardBytes / 2 - at] ^= 0xff;
        if (rateBytesPerS) {
          // The chunk takes its turn on the model's one line.
          const now = performance.now();
          // A busy line keeps its schedule (a turn missed by a late timer on a busy machine is caught up); an idle one starts now, without a burst.
          const start = model.line.freeAt >= now - 100 ? model.line.freeAt : now;
          model.line.freeAt = start + (chunk.length / rateBytesPerS) * 1000;
          if (model.line.freeAt - now > 1) await new Promise((resolve) => setTimeout(resolve, model.line.freeAt - now));
        }
        if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
        if (res.destroyed) return;
      }
      if (stallAfter !== null && stallAfter < shardBytes) return; // the connection stays open, silent, until the client gives up
      if (drop) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return res.socket?.destroy();
      }
      return res.end();
    }
    let body: Buffer;
    if (file === "mlc-model-manifest.json" && model.spec.packageManifest) body = Buffer.from(JSON.stringify({ schema: "mlc.model-package", chat_config: model.spec.packagePaths?.chat_config ?? "config/mlc-chat-config.json", weights: { manifest: model.spec.packagePaths?.weights_manifest ?? "weights/tensor-cache.json" } }));
    else if (file === `${layout.config}mlc-chat-config.json`) body = Buffer.from(JSON.stringify(chatConfig()));
    else if (file === `${layout.weights}tensor-cache.json`) body = Buffer.from(JSON.stringify(tensorIndex(model)));
    else if (file === "tokenizer.json") body = model.spec.validTokenizer ? validTokenizerJson() : tokenizerJson(model.spec.tokenizerBytes);
    else if (file === "model.wasm") body = model.spec.realLib && options.modelLib ? options.modelLib : wasm(model.spec.wasmBytes);
    else return send(res, 404, "not found", "text/plain");
    if (corrupt) body[body.length >> 1] ^= 0xff;
    if (file === "tokenizer.json" && model.fault.lyingLength !== null) {
      // A header promising far more than the body: the body ends, then the connection closes.
      res.writeHead(200, { "content-type": "application/json", "content-length": model.fault.lyingLength, "access-control-allow-origin": "*", "cache-control": "no-store" });
      res.write(body);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return res.socket?.destroy();
    }
    send(res, 200, body, file.endsWith(".json") ? "application/json" : file.endsWith(".wasm") ? "application/wasm" : "application/octet-stream");
  }

  const server: Server = createServer((req, res) => {
    const parsed = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = parsed.pathname;
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, POST", "access-control-allow-headers": "*" });
      return res.end();
    }
    const handle = async () => {
      if (path.startsWith("/__control/")) return control(req, res, path, parsed.searchParams);
      const file = /^\/m\/([^/]+)\/resolve\/main\/(.+)$/.exec(path);
      const lib = /^\/lib\/([^/]+)\.wasm$/.exec(path);
      const model = models.get(file?.[1] ?? lib?.[1] ?? "");
      if (!model) return send(res, 404, "not found", "text/plain");
      return serveFile(res, model, file ? file[2] : "model.wasm");
    };
    handle().catch((error) => {
      if (!res.headersSent) send(res, 500, String(error), "text/plain");
      else res.socket?.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
