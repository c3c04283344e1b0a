/**
 * The checks a file's bytes must pass (the shard's `md5sum`, an SRI hash from
 * the model record), computed incrementally as the bytes stream in, so the
 * exact bytes handed to the store are the bytes hashed, with no second pass.
 *
 * Hashing runs in WebAssembly (hash-wasm): MD5 in JavaScript ran at about a
 * third of a loopback fetch's speed and capped the whole download. Where a
 * Content-Security-Policy forbids compiling WebAssembly, MD5 falls back to the
 * JavaScript implementation (md5.ts) and SRI to WebCrypto over the whole file
 * (`needsWholeFile`: the caller then keeps the bytes until the end).
 */
import { createMD5, createSHA256, createSHA384, createSHA512, type IHasher } from "hash-wasm";
import type { Artifact } from "./artifacts.js";
import { Md5 } from "./md5.js";

type Algorithm = "md5" | "sha256" | "sha384" | "sha512";

const CREATE: Record<Algorithm, () => Promise<IHasher>> = { md5: createMD5, sha256: createSHA256, sha384: createSHA384, sha512: createSHA512 };
const WEBCRYPTO: Record<string, string> = { sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };

/** Instantiated hashers, reused across files (an instance costs a WebAssembly instantiation). */
const idle = new Map<Algorithm, IHasher[]>();
let wasmWorks: boolean | null = null;

async function takeHasher(algorithm: Algorithm): Promise<IHasher | null> {
  if (wasmWorks === false) return null;
  const pooled = idle.get(algorithm)?.pop();
  if (pooled) return pooled.init();
  try {
    const hasher = await CREATE[algorithm]();
    wasmWorks = true;
    return hasher.init();
  } catch {
    // CSP without 'wasm-unsafe-eval', or no WebAssembly: the fallbacks below.
    wasmWorks = false;
    return null;
  }
}

function giveHasher(algorithm: Algorithm, hasher: IHasher): void {
  const list = idle.get(algorithm) ?? [];
  if (list.length < 8) list.push(hasher);
  idle.set(algorithm, list);
}

/** One SRI entry (`sha256-<base64>`), parsed. */
interface SriEntry {
  algorithm: Exclude<Algorithm, "md5">;
  base64: string;
}

function sriEntries(sri: string): SriEntry[] {
  const entries: SriEntry[] = [];
  for (const entry of sri.trim().split(/\s+/)) {
    const dash = entry.indexOf("-");
    const algorithm = entry.slice(0, dash);
    if (algorithm in WEBCRYPTO) entries.push({ algorithm: algorithm as SriEntry["algorithm"], base64: entry.slice(dash + 1).split("?")[0] });
  }
  return entries;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The running checks of one file: `update` with every chunk in order, then `problem()` once. */
export class FileCheck {
  private length = 0;

  private constructor(
    private readonly artifact: Artifact,
    private md5: IHasher | Md5 | null,
    private readonly sri: Array<{ entry: SriEntry; hasher: IHasher | null }>,
  ) {}

  /** Starts the checks the artifact declares. */
  static async start(artifact: Artifact): Promise<FileCheck> {
    const md5 = artifact.md5 ? ((await takeHasher("md5")) ?? new Md5()) : null;
    const sri = artifact.sri ? await Promise.all(sriEntries(artifact.sri).map(async (entry) => ({ entry, hasher: await takeHasher(entry.algorithm) }))) : [];
    return new FileCheck(artifact, md5, sri);
  }

  /** Whether a check can only run on the whole file at the end (SRI without WebAssembly). */
  get needsWholeFile(): boolean {
    return this.sri.some((s) => s.hasher === null);
  }

  update(chunk: Uint8Array): void {
    this.length += chunk.byteLength;
    this.md5?.update(chunk);
    for (const { hasher } of this.sri) hasher?.update(chunk);
  }

  /**
   * Why the file is rejected, or null when it matches. `whole` is the file's
   * bytes when `needsWholeFile` (else unused). Releases the hashers.
   */
  async problem(whole?: Uint8Array): Promise<string | null> {
    const { artifact } = this;
    try {
      if (artifact.bytes !== null && this.length !== artifact.bytes) return `${artifact.name}: got ${this.length} bytes, the model declares ${artifact.bytes}`;
      if (this.md5 && artifact.md5) {
        const hex = this.md5 instanceof Md5 ? this.md5.hex() : this.md5.digest("hex");
        if (hex !== artifact.md5) return `${artifact.name}: md5 ${hex} does not match the declared ${artifact.md5}`;
      }
      if (this.sri.length > 0 || artifact.sri) {
        let matched = false;
        for (const { entry, hasher } of this.sri) {
          const digest = hasher ? hasher.digest("binary") : whole ? new Uint8Array(await crypto.subtle.digest(WEBCRYPTO[entry.algorithm], whole as Uint8Array<ArrayBuffer>)) : null;
          if (digest && base64(digest) === entry.base64) matched = true;
        }
        if (!matched) return `${artifact.name}: its hash does not match the integrity value ${artifact.sri}`;
      }
      return null;
    } finally {
      this.release();
    }
  }

  /** Gives the hashers back (also after a failed attempt). */
  release(): void {
    if (this.md5 && !(this.md5 instanceof Md5)) giveHasher("md5", this.md5);
    for (const { entry, hasher } of this.sri) if (hasher) giveHasher(entry.algorithm, hasher);
    this.md5 = null;
    this.sri.length = 0;
  }
}
