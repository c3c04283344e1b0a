/**
 * The real-engine audio run (scripts/smoke-real.mjs --audio file [--image file]):
 * a model that takes audio (Gemma 4 E2B on web-llm 0.2.86, whose package
 * manifest declares an audio_decode processor) is loaded through our library,
 * then asked about the audio (and the image). `window.smokeAudio(options)`
 * returns one report; nothing here runs without a GPU and the model library.
 */
import { createClient, type ModelRecord } from "../../src/index.js";

export interface AudioSmokeOptions {
  modelId: string;
  /** The model folder is served at /model/ (else the prebuilt record of `modelId` is used, from its own URLs). */
  localModel: boolean;
  /** The folder holds resolve/main/mlc-model-manifest.json. */
  hasManifest: boolean;
  audio: { data: string; format: string };
  image?: string;
  maxTokens: number;
}

type Json = Record<string, unknown>;

declare global {
  interface Window {
    smokeAudio(options: AudioSmokeOptions): Promise<Json>;
    smokeAudioReport: Json;
  }
}

const errorOf = (error: unknown): Json => {
  const e = error as { name?: string; message?: string; status?: number; code?: string; param?: string };
  return { name: e?.name, status: e?.status, code: e?.code, param: e?.param, message: String(e?.message ?? error).slice(0, 600) };
};

export function defineAudioSmoke(): void {
  window.smokeAudio = async (options) => {
    const report: Json = { modelId: options.modelId };
    window.smokeAudioReport = report;
    const record: ModelRecord = {
      model: `${location.origin}/model/`,
      model_id: options.modelId,
      model_lib: `${location.origin}/lib/model.wasm`,
      overrides: { context_window_size: 4096 },
      ...(options.hasManifest ? { model_manifest: "mlc-model-manifest.json" } : {}),
      input_modalities: ["text", "image", "audio"],
    };
    const client = createClient({ models: options.localModel ? [record] : [], cache: "indexeddb" });
    report.inputModalitiesBeforeLoad = await client.models.retrieve(options.modelId).then((m) => m.input_modalities, errorOf);
    const t0 = performance.now();
    report.load = await client.models.load(options.modelId).then(() => ({ ms: Math.round(performance.now() - t0) }), (e: unknown) => ({ error: errorOf(e) }));
    // After the download the package manifest is cached: the kinds (and the audio limits) now come from it.
    report.inputModalitiesAfterLoad = await client.models.retrieve(options.modelId).then((m) => m.input_modalities, errorOf);
    const ask = async (part: Json, text: string) => {
      const t = performance.now();
      try {
        const c = await client.chat.completions.create({ model: options.modelId, temperature: 0, max_tokens: options.maxTokens, messages: [{ role: "user", content: [part, { type: "text", text }] as never }] });
        return { ms: Math.round(performance.now() - t), content: c.choices[0].message.content, finish_reason: c.choices[0].finish_reason, usage: c.usage, x_webgpu: (c as { x_webgpu?: unknown }).x_webgpu };
      } catch (error) {
        return { ms: Math.round(performance.now() - t), error: errorOf(error) };
      }
    };
    report.audio = await ask({ type: "input_audio", input_audio: options.audio }, "Transcribe this audio.");
    if (options.image) report.image = await ask({ type: "image_url", image_url: { url: options.image } }, "What is in this image?");
    client.terminate();
    return report;
  };
}
