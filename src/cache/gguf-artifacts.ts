/**
 * What files a GGUF model (the wllama engine's records) consists of: the
 * record's `model` is the URL of its .gguf file, or of the first part of a
 * split GGUF (`name-00001-of-00003.gguf`, as llama.cpp's `gguf-split` names
 * them), whose other parts lie beside it. Every file must lie in the folder
 * of that URL, on its origin, with no query or fragment (url-policy.ts): an
 * encoded separator or dot segment in the name (`..%2Fadmin.gguf`), which a
 * server may decode into another path, is refused before anything is fetched.
 *
 * They are stored in the `wllama/gguf` scope, keyed by URL, each of unknown
 * size until its response says (at most MAX_FILE_BYTES.gguf, 2 GiB, wllama's
 * own limit per file), with the SHA-256 (or other SRI hash) the record's
 * `integrity` gives for its file name.
 */
import type { ModelRecord } from "../models/record.js";
import { ApiError } from "../protocol/api-error.js";
import type { Artifact, ArtifactPlan } from "./artifacts.js";
import { fileInFolder, fileInFolderOrNull } from "./url-policy.js";

/** `name-00001-of-00003.gguf`: the split's stem, this part's number and the part count. */
const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/;

/** Parts of a split GGUF, at most (llama.cpp's gguf-split writes five digits). */
export const MAX_GGUF_PARTS = 256;

/** The absolute URL of the record's GGUF (relative ones resolve against the page). */
function modelUrl(record: ModelRecord): URL {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  return new URL(record.model, base);
}

/** The folder a GGUF record's files must lie in: that of its `model` URL. */
export function ggufFolder(record: ModelRecord): string {
  return new URL(".", modelUrl(record)).href;
}

/** The file names of the record's GGUF: one, or every part of a split one (the record names the first). */
export function ggufFileNames(record: ModelRecord): string[] {
  const url = modelUrl(record);
  const name = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
  const split = SPLIT.exec(name);
  if (!split || Number(split[2]) !== 1) return [name];
  const count = Number(split[3]);
  if (count < 1 || count > MAX_GGUF_PARTS) return [name];
  return Array.from({ length: count }, (_, i) => `${split[1]}-${String(i + 1).padStart(5, "0")}-of-${split[3]}.gguf`);
}

/** Every file to fetch for the record, confined to its folder (400 `model_url_refused` naming the file otherwise). */
export function ggufPlan(record: ModelRecord): ArtifactPlan {
  const url = modelUrl(record);
  // The file is stored and found again under its URL: a query would be dropped from the parts' names, or vary the key.
  if (url.search !== "" || url.hash !== "") {
    throw new ApiError({ status: 400, code: "model_url_refused", param: "model", message: `The GGUF URL of ${record.model_id} has a query or fragment (${url.search}${url.hash}); name the .gguf file by a plain URL.` });
  }
  const folder = ggufFolder(record);
  const integrity = (record.integrity ?? {}) as Record<string, unknown>;
  const artifacts = ggufFileNames(record).map((name): Artifact => {
    const url = fileInFolder(folder, name, `The GGUF model ${record.model_id}`, folder, true);
    const sri = integrity[name];
    return { kind: "gguf", name, url, scope: "wllama/gguf", storeType: "arraybuffer", bytes: null, ...(typeof sri === "string" ? { sri } : {}) };
  });
  return { modelId: record.model_id, modelUrl: folder, artifacts };
}

/** The record's GGUF URLs, for delete: those that would be fetched, none outside its folder. */
export function ggufUrls(record: ModelRecord): string[] {
  const folder = ggufFolder(record);
  return ggufFileNames(record).flatMap((name) => fileInFolderOrNull(folder, name) ?? []);
}

/** Whether `url` is one of the record's GGUF files (delete removes nothing else of a recorded file list). */
export function ownsGgufUrl(record: ModelRecord): (url: string) => boolean {
  const own = new Set(ggufUrls(record));
  return (url) => own.has(url);
}
