/// <reference lib="webworker" />
/**
 * A worker whose scripted engine answers with what reached it: for every
 * audio part, its form, sample count and rate, and the decoded tone's
 * frequency (zero crossings) and level (RMS) — so a page test can see what
 * the worker decoded. Models: the catalog (Gemma 4 takes audio) and the
 * scripted voice record (16 kHz, 0.1–30 s).
 */
import { EngineHost, createScriptedEngine, exposeEngineHost, scriptedVoiceModel, type EngineRequest } from "../../../src/testing.js";

function describeAudio(request: EngineRequest): string {
  const parts = request.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
  return JSON.stringify(
    parts.flatMap((p) => {
      if (p.type !== "input_audio") return [];
      const input = p.input_audio;
      const out: Record<string, unknown> = { ...p.audio, format: input.format };
      if (input.format === "pcm_f32") {
        // The tone is measured on the middle half: codecs add near-silent edges (encoder delay, padding).
        const s = input.data.subarray(input.data.length >> 2, input.data.length - (input.data.length >> 2));
        let crossings = 0;
        let sum = 0;
        for (let i = 1; i < s.length; i++) if (s[i - 1] < 0 !== s[i] < 0) crossings++;
        for (const v of s) sum += v * v;
        out.hz = Math.round(crossings / 2 / (s.length / input.sample_rate));
        out.rms = Math.round(Math.sqrt(sum / s.length) * 100) / 100;
        out.isFloat32Array = s instanceof Float32Array;
      }
      return [out];
    }),
  );
}

exposeEngineHost(new EngineHost({ engine: createScriptedEngine({ replies: describeAudio }), models: [scriptedVoiceModel()] }));
