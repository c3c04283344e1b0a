/**
 * Checks a downloaded file against what the model declares: its size, the
 * shard's `md5sum` (hashed while streaming, see md5.ts) and an optional SRI
 * hash from the model record.
 */
import type { Artifact } from "./artifacts.js";

const SRI_ALGORITHMS: Record<string, string> = { sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };

/** Why a file was rejected, or null when it matches. */
export async function integrityProblem(artifact: Artifact, bytes: Uint8Array, md5: string | null): Promise<string | null> {
  if (artifact.bytes !== null && bytes.byteLength !== artifact.bytes) {
    return `${artifact.name}: got ${bytes.byteLength} bytes, the model declares ${artifact.bytes}`;
  }
  if (artifact.md5 && md5 !== null && md5 !== artifact.md5) {
    return `${artifact.name}: md5 ${md5} does not match the declared ${artifact.md5}`;
  }
  if (artifact.sri) {
    const problem = await sriProblem(artifact.sri, bytes);
    if (problem) return `${artifact.name}: ${problem}`;
  }
  return null;
}

/** Verifies an SRI string (one or more space-separated hashes; any match passes). */
async function sriProblem(sri: string, bytes: Uint8Array): Promise<string | null> {
  const wanted = sri.trim().split(/\s+/);
  for (const entry of wanted) {
    const dash = entry.indexOf("-");
    const algorithm = SRI_ALGORITHMS[entry.slice(0, dash)];
    if (!algorithm) continue;
    const digest = new Uint8Array(await crypto.subtle.digest(algorithm, bytes as Uint8Array<ArrayBuffer>));
    let binary = "";
    for (const byte of digest) binary += String.fromCharCode(byte);
    if (btoa(binary) === entry.slice(dash + 1).split("?")[0]) return null;
  }
  return `its hash does not match the integrity value ${sri}`;
}
