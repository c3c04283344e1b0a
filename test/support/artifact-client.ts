/** Page-side helpers for the artifact server (test/support/artifact-server.ts). */
import type { ModelRecord } from "../../src/models/record.js";
import type { ModelSpec } from "./artifact-server.js";

export interface ServedModelHandle {
  name: string;
  baseUrl: string;
  record: ModelRecord;
  /** Bytes of all weight shards. */
  totalBytes: number;
  fault(fault: { stopped?: boolean; dropFrom?: number | null; corruptOnce?: string[]; delayMs?: number; rateBytesPerS?: number | null; stallAfter?: number | null; lyingLength?: number | null }): Promise<void>;
  stats(): Promise<{ total: number; byFile: Record<string, number> }>;
}

export async function serveModel(serverUrl: string, spec: Partial<ModelSpec> = {}): Promise<ServedModelHandle> {
  const created = await (await fetch(`${serverUrl}/__control/model`, { method: "POST", body: JSON.stringify(spec) })).json();
  const q = `?name=${encodeURIComponent(created.name)}`;
  return {
    ...created,
    async fault(fault) {
      await fetch(`${serverUrl}/__control/fault${q}`, { method: "POST", body: JSON.stringify(fault) });
    },
    async stats() {
      return (await fetch(`${serverUrl}/__control/stats${q}`, { cache: "no-store" })).json();
    },
  };
}
