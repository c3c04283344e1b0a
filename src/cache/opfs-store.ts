/**
 * web-llm's OPFS layout (`OPFSStore`, bundle L5835+):
 * `tvmjs-opfs-store/<scope parts, URI-encoded>/<sha256hex(url)>.bin` plus
 * `<hash>.record.json` = `{url, nbytes, contentType}`. web-llm treats a file
 * as present only when the record exists and the payload has `nbytes`.
 */
import type { StoreType } from "./artifacts.js";
import type { Scope } from "./layout.js";
import { contentTypeOf, type ArtifactStore, type StoredValue, type StreamingWrite } from "./store.js";

const ROOT = "tvmjs-opfs-store";

interface OpfsRecord {
  url: string;
  nbytes: number;
  contentType?: string;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === "NotFoundError" || name === "TypeMismatchError";
}

export class OpfsArtifactStore implements ArtifactStore {
  readonly backend = "opfs" as const;

  private async dir(scope: Scope, create = true): Promise<FileSystemDirectoryHandle | undefined> {
    try {
      let directory = await (await navigator.storage.getDirectory()).getDirectoryHandle(ROOT, { create });
      for (const part of scope.split("/").filter(Boolean)) directory = await directory.getDirectoryHandle(encodeURIComponent(part), { create });
      return directory;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private async entry(scope: Scope, url: string): Promise<{ record: OpfsRecord; payload: File } | undefined> {
    const directory = await this.dir(scope, false);
    if (!directory) return undefined;
    const base = await sha256Hex(url);
    try {
      const record = JSON.parse(await (await (await directory.getFileHandle(`${base}.record.json`)).getFile()).text()) as OpfsRecord;
      if (record?.url !== url) return undefined;
      const payload = await (await directory.getFileHandle(`${base}.bin`)).getFile();
      return payload.size === record.nbytes ? { record, payload } : undefined;
    } catch (error) {
      if (isNotFound(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }

  async has(scope: Scope, url: string): Promise<boolean> {
    return (await this.entry(scope, url)) !== undefined;
  }

  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const entry = await this.entry(scope, url);
    return entry ? { kind: "bytes", data: await entry.payload.arrayBuffer() } : undefined;
  }

  async readBlob(scope: Scope, url: string): Promise<Blob | undefined> {
    return (await this.entry(scope, url))?.payload;
  }

  /**
   * Record last, as web-llm does: a payload without a record is a miss. So a
   * write first removes the record (the old payload is then a miss while the
   * new one is written) and `finishWrite` writes it once the payload is whole.
   */
  private async startWrite(scope: Scope, url: string): Promise<{ directory: FileSystemDirectoryHandle; base: string }> {
    const directory = (await this.dir(scope)) as FileSystemDirectoryHandle;
    const base = await sha256Hex(url);
    await directory.removeEntry(`${base}.record.json`).catch((error) => {
      if (!isNotFound(error)) throw error;
    });
    return { directory, base };
  }

  private async finishWrite(directory: FileSystemDirectoryHandle, base: string, url: string, nbytes: number, storeType: StoreType): Promise<void> {
    const record: OpfsRecord = { url, nbytes, contentType: contentTypeOf(storeType) };
    await writeFile(await directory.getFileHandle(`${base}.record.json`, { create: true }), new TextEncoder().encode(JSON.stringify(record)));
  }

  async write(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<void> {
    const { directory, base } = await this.startWrite(scope, url);
    await writeFile(await directory.getFileHandle(`${base}.bin`, { create: true }), bytes);
    await this.finishWrite(directory, base, url, bytes.byteLength, storeType);
  }

  /** Appends to the payload's swap file as bytes arrive; `close()` makes it the payload, then the record is written. */
  async openWrite(scope: Scope, url: string, storeType: StoreType): Promise<StreamingWrite> {
    const { directory, base } = await this.startWrite(scope, url);
    const writable = await (await directory.getFileHandle(`${base}.bin`, { create: true })).createWritable();
    let length = 0;
    return {
      write: async (chunk) => {
        await writable.write(chunk as Uint8Array<ArrayBuffer>);
        length += chunk.byteLength;
      },
      commit: async () => {
        await writable.close();
        await this.finishWrite(directory, base, url, length, storeType);
      },
      abort: async () => {
        await writable.abort().catch(() => undefined);
        // The swap file is gone; the empty payload created to open it goes too.
        await directory.removeEntry(`${base}.bin`).catch(() => undefined);
      },
    };
  }

  async remove(scope: Scope, url: string): Promise<void> {
    const directory = await this.dir(scope, false);
    if (!directory) return;
    const base = await sha256Hex(url);
    for (const name of [`${base}.bin`, `${base}.record.json`]) {
      await directory.removeEntry(name).catch((error) => {
        if (!isNotFound(error)) throw error;
      });
    }
  }

  async urls(scope: Scope): Promise<string[]> {
    const directory = await this.dir(scope, false);
    if (!directory) return [];
    const urls: string[] = [];
    for await (const [name, handle] of (directory as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
      if (!name.endsWith(".record.json") || handle.kind !== "file") continue;
      try {
        const record = JSON.parse(await (await (handle as FileSystemFileHandle).getFile()).text()) as OpfsRecord;
        if (typeof record.url === "string") urls.push(record.url);
      } catch {
        // An unreadable record is a miss for web-llm too.
      }
    }
    return urls;
  }

  async clear(scope: Scope): Promise<void> {
    const parts = scope.split("/").filter(Boolean).map(encodeURIComponent);
    let parent: FileSystemDirectoryHandle | undefined = await (await navigator.storage.getDirectory()).getDirectoryHandle(ROOT, { create: true });
    for (const part of parts.slice(0, -1)) parent = await parent.getDirectoryHandle(part, { create: true });
    await parent.removeEntry(parts[parts.length - 1], { recursive: true }).catch((error) => {
      if (!isNotFound(error)) throw error;
    });
  }
}

async function writeFile(handle: FileSystemFileHandle, bytes: Uint8Array): Promise<void> {
  const writable = await handle.createWritable();
  try {
    await writable.write(bytes as Uint8Array<ArrayBuffer>);
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => undefined);
    throw error;
  }
}
