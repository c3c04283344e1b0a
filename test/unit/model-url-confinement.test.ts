/**
 * A model's own files cannot send the downloader anywhere: paths in its
 * tensor index (`dataPath`) and package manifest (`chat_config`,
 * `weights.manifest`) that leave its folder — traversal, an absolute path of
 * the app's origin, another host, a `data:` URL, encoded separators — are a
 * 502 naming the path (the model's host is at fault, not the request), and nothing outside the folder is fetched (every fetch
 * is recorded here, and a bystander server counts what reaches it). Files are
 * fetched without credentials; the record's `model` / `model_lib` must be
 * http(s); `require_integrity` refuses unpinned files before fetching them;
 * and deleting a model never reaches another model's files. Runs the real
 * downloader in Node against the artifact server (test/support), with an
 * in-memory store standing in for web-llm's cache.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startArtifactServer, type ArtifactServer, type ModelSpec } from "../support/artifact-server.js";
import { downloadModel } from "../../src/cache/downloader.js";
import { possibleUrls } from "../../src/cache/artifacts.js";
import type { ArtifactStore, StoredValue } from "../../src/cache/store.js";
import type { Scope } from "../../src/cache/layout.js";
import type { ModelRecord } from "../../src/models/record.js";
import type { ApiError } from "../../src/protocol/api-error.js";

let artifacts: ArtifactServer;
let bystander: Server;
let bystanderUrl: string;
let bystanderHits = 0;

beforeAll(async () => {
  artifacts = await startArtifactServer();
  bystander = createServer((_req, res) => {
    bystanderHits++;
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end("secret");
  });
  await new Promise<void>((resolve) => bystander.listen(0, "127.0.0.1", resolve));
  bystanderUrl = `http://localhost:${(bystander.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await artifacts.close();
  await new Promise<void>((resolve) => bystander.close(() => resolve()));
});

/** Every fetch the downloader makes: URL and credentials mode. */
const fetched: Array<{ url: string; credentials: RequestCredentials | undefined }> = [];
const realFetch = globalThis.fetch;
beforeAll(() => {
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    fetched.push({ url: String(input), credentials: init?.credentials });
    return realFetch(input, init);
  }) as typeof fetch;
});
afterAll(() => {
  globalThis.fetch = realFetch;
});
afterEach(() => {
  fetched.length = 0;
  bystanderHits = 0;
});

class MemoryStore implements ArtifactStore {
  readonly backend = "indexeddb" as const;
  readonly files = new Map<string, Uint8Array>();
  async has(scope: Scope, url: string) {
    return this.files.has(`${scope} ${url}`);
  }
  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const bytes = this.files.get(`${scope} ${url}`);
    return bytes ? { kind: "bytes", data: bytes.slice().buffer } : undefined;
  }
  async write(scope: Scope, url: string, bytes: Uint8Array) {
    this.files.set(`${scope} ${url}`, bytes.slice());
  }
  async remove(scope: Scope, url: string) {
    this.files.delete(`${scope} ${url}`);
  }
  async urls(scope: Scope) {
    return [...this.files.keys()].filter((key) => key.startsWith(`${scope} `)).map((key) => key.slice(scope.length + 1));
  }
  async clear(scope: Scope) {
    for (const key of [...this.files.keys()]) if (key.startsWith(`${scope} `)) this.files.delete(key);
  }
}

async function serve(spec: Partial<ModelSpec>): Promise<{ record: ModelRecord; baseUrl: string; name: string }> {
  const response = await realFetch(`${artifacts.url}/__control/model`, { method: "POST", body: JSON.stringify({ shards: 2, shardBytes: 4096, ...spec }) });
  return (await response.json()) as { record: ModelRecord; baseUrl: string; name: string };
}

async function refusal(record: ModelRecord, store = new MemoryStore()): Promise<ApiError> {
  return downloadModel(record, { store, retries: 0 }).then(
    () => {
      throw new Error("expected the download to be refused");
    },
    (error: ApiError) => error,
  );
}

describe("paths in a model's own files stay under its folder", () => {
  const hostile: Array<[string, () => string]> = [
    ["traversal to another organisation's model", () => "../../../other-org/model/resolve/main/params_shard_0.bin"],
    ["an absolute path of the app's origin", () => "/account/logout?everywhere=1"],
    ["another host", () => `${bystanderUrl}/internal-admin`],
    ["a data: URL", () => "data:application/octet-stream;base64,AAAAAA=="],
    ["encoded separators", () => "..%2F..%2F..%2Fother%2Fparams.bin"],
    ["a protocol-relative URL", () => `//${new URL(bystanderUrl).host}/x.bin`],
  ];

  it.each(hostile)("a dataPath with %s is a 502; nothing outside the folder is fetched or stored", async (_what, path) => {
    const { record, baseUrl } = await serve({ dataPaths: ["params_shard_0.bin", path()] });
    const store = new MemoryStore();
    const error = await refusal(record, store);
    expect(error).toMatchObject({ status: 502, code: "model_url_refused", param: "model" });
    expect(error.message).toContain("dataPath");
    // The config and the index were read (they say what the files are); nothing else, and nothing was stored.
    expect(fetched.map((f) => f.url).sort()).toEqual([`${baseUrl}mlc-chat-config.json`, `${baseUrl}tensor-cache.json`]);
    expect(store.files.size).toBe(0);
    expect(bystanderHits).toBe(0);
  });

  it("a package manifest whose chat_config or weights.manifest leaves the folder is a 502 after fetching only the manifest", async () => {
    for (const packagePaths of [{ chat_config: "../../../elsewhere/mlc-chat-config.json" }, { weights_manifest: `${bystanderUrl}/tensor-cache.json` }]) {
      fetched.length = 0;
      const { record, baseUrl } = await serve({ packageManifest: true, packagePaths });
      const error = await refusal(record);
      expect(error).toMatchObject({ status: 502, code: "model_url_refused" });
      expect(fetched.map((f) => f.url)).toEqual([`${baseUrl}mlc-model-manifest.json`]);
    }
    expect(bystanderHits).toBe(0);
  });

  it("a well-formed model downloads whole, every file fetched with credentials: omit", async () => {
    const { record } = await serve({ packageManifest: true });
    const store = new MemoryStore();
    const result = await downloadModel(record, { store, retries: 0 });
    expect(result.plan.artifacts.length).toBe(7); // manifest, config, index, 2 shards, tokenizer, wasm
    expect(fetched.length).toBe(7);
    expect(fetched.every((f) => f.credentials === "omit")).toBe(true);
  });
});

describe("the record's own URLs", () => {
  it.each([
    ["model_lib", "data:application/wasm;base64,AGFzbQEAAAA="],
    ["model_lib", "blob:https://elsewhere.example/0b7c2c1e-1111-4f7e-8b8e-000000000000"],
    ["model", "data:text/plain,hello/"],
    ["model_lib", "javascript:alert(1)"],
  ])("%s %s is a 400 before anything is fetched", async (field, value) => {
    const { record } = await serve({});
    const error = await refusal({ ...record, [field]: value });
    expect(error).toMatchObject({ status: 400, code: "model_url_refused", param: field });
    expect(fetched).toEqual([]);
  });
});

describe("require_integrity", () => {
  it("without a hash for every file, nothing unpinned is fetched", async () => {
    const { record } = await serve({});
    const bare = await refusal({ ...record, require_integrity: true });
    expect(bare).toMatchObject({ status: 400, code: "integrity_missing" });
    expect(bare.message).toContain("mlc-chat-config.json");
    expect(fetched).toEqual([]);

    // Config and index pinned (their hashes as served), shards not: the index is read, then the download stops.
    const sri = async (file: string) => {
      const bytes = new Uint8Array(await (await realFetch(`${record.model}/resolve/main/${file}`)).arrayBuffer());
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      return `sha256-${btoa(String.fromCharCode(...digest))}`;
    };
    const integrity = { "mlc-chat-config.json": await sri("mlc-chat-config.json"), "tensor-cache.json": await sri("tensor-cache.json") };
    const partial = await refusal({ ...record, require_integrity: true, integrity });
    expect(partial).toMatchObject({ status: 400, code: "integrity_missing", message: expect.stringContaining("params_shard_0.bin") });
    expect(fetched.map((f) => new URL(f.url).pathname.split("/").pop()).sort()).toEqual(["mlc-chat-config.json", "tensor-cache.json"]);
  });
});

describe("deleting a model", () => {
  it("never names another model's files, whatever its cached index lists", () => {
    const record = { model: "https://host.example/org/a", model_id: "a", model_lib: "https://host.example/libs/a.wasm" } as ModelRecord;
    const index = {
      records: [
        { dataPath: "params_shard_0.bin", nbytes: 4 },
        { dataPath: "../../../b/resolve/main/params_shard_0.bin", nbytes: 4 },
        { dataPath: "https://host.example/org/b/resolve/main/params_shard_1.bin", nbytes: 4 },
        { dataPath: "/org/b/resolve/main/tokenizer.json", nbytes: 4 },
      ],
    };
    const urls = possibleUrls(record, index).map((u) => u.url);
    expect(urls).toContain("https://host.example/org/a/resolve/main/params_shard_0.bin");
    expect(urls.filter((url) => url.includes("/org/b/"))).toEqual([]);
    // A cached manifest naming paths outside the folder: the defaults are deleted, nothing outside.
    const withPaths = possibleUrls(record, null, { chatConfig: "../../../b/resolve/main/mlc-chat-config.json" }).map((u) => u.url);
    expect(withPaths.filter((url) => url.includes("/org/b/"))).toEqual([]);
  });
});
