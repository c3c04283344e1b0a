/**
 * A chat model and an embedding model in ONE client (one worker, one web-llm
 * engine), driven by scripts/smoke-real.mjs when it has both folders:
 * both load once, then embeddings and chat requests alternate and nothing
 * loads again (the client's onProgress stays silent), the two embeddings of
 * the same batch are identical, and the chat replies arrive.
 */
import { createClient } from "../../src/index.js";
import type { LoadProgress, ModelRecord } from "../../src/index.js";
import { embedRecord, embedTimed, errorOf, served, worker, type EmbeddingList, type Json } from "./embed-smoke.js";
import { maxAbsDiff } from "./embed-smoke.js";

export interface MixedSmokeOptions {
  chatModelId: string;
  embedModelId: string;
  countersUrl: string;
  stubKernels: string[];
  inputs: string[];
  compiledBatch?: number;
}

export function chatRecord(modelId: string): ModelRecord {
  return {
    model: `${location.origin}/model/`,
    model_id: modelId,
    model_lib: `${location.origin}/lib/model.wasm`,
    overrides: { context_window_size: 4096 },
    low_resource_required: true,
  };
}

declare global {
  interface Window {
    smokeMixed(options: MixedSmokeOptions): Promise<Json>;
    smokeMixedReport: Json;
  }
}

export function defineMixedSmoke(): void {
  window.smokeMixed = smokeMixed;
}

async function smokeMixed(options: MixedSmokeOptions): Promise<Json> {
  const report: Json = {};
  window.smokeMixedReport = report;
  const loads: string[] = [];
  let phase = "";
  const client = createClient({
    models: [chatRecord(options.chatModelId), embedRecord(options.embedModelId, options.compiledBatch)],
    cache: "indexeddb",
    worker: worker(options.stubKernels),
    // every load reports progress here: after the two loads below, nothing may
    onProgress: (p: LoadProgress) => {
      if (p.phase !== phase || loads.length === 0) loads.push(`${phase}:${p.phase}`);
      phase = p.phase;
    },
  });
  const before = await served(options.countersUrl);
  const t0 = performance.now();
  try {
    await client.models.load(options.chatModelId);
    report.chatLoadMs = Math.round(performance.now() - t0);
    const t1 = performance.now();
    await client.models.load(options.embedModelId);
    report.embedLoadMs = Math.round(performance.now() - t1);
  } catch (error) {
    report.loadError = errorOf(error);
    client.terminate();
    return report;
  }
  report.modelRequestsForLoads = (await served(options.countersUrl)) - before;
  report.progressEventsDuringLoads = loads.length;
  loads.length = 0;
  const listed = await client.models.list();
  report.listed = listed.data.filter((m) => [options.chatModelId, options.embedModelId].includes(m.id)).map((m) => ({ id: m.id, type: (m as { type?: string }).type }));

  const embed = () => embedTimed(async () => (await client.embeddings.create({ model: options.embedModelId, input: options.inputs })) as unknown as EmbeddingList);
  const chat = async () => {
    const t = performance.now();
    try {
      const c = await client.chat.completions.create({ model: options.chatModelId, messages: [{ role: "system", content: "S" }, { role: "user", content: "Hi" }], max_tokens: 1, temperature: 0, seed: 42 });
      return { ms: Math.round(performance.now() - t), finish_reason: c.choices[0].finish_reason, usage: c.usage };
    } catch (error) {
      return { ms: Math.round(performance.now() - t), error: errorOf(error) };
    }
  };
  const e1 = await embed();
  report.embed1 = e1.report;
  report.chat1 = await chat();
  const e2 = await embed();
  report.embed2 = e2.report;
  report.chat2 = await chat();
  report.progressEventsAfterLoads = loads.length; // 0: neither model reloaded
  report.loadsSeenAfterLoads = [...loads];
  report.maxAbsDiffEmbed1VsEmbed2 = maxAbsDiff(e1.vectors, e2.vectors);
  report.modelRequestsAfterLoads = (await served(options.countersUrl)) - before - (report.modelRequestsForLoads as number);
  client.terminate();
  return report;
}
