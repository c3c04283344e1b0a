/**
 * What the web-llm adapter sends for images and audio, checked by web-llm
 * 0.2.86's own code in Node (no GPU, no Gemma 4 library here):
 * - `postInitAndCheckFieldsChatCompletion` (exported) is the request check
 *   MLCEngine.chatCompletion runs first, given the loaded model's input kinds
 *   (what a manifest pipeline reports);
 * - `decodeAudioInput` (web-llm's audio processor front: WAV parsing,
 *   pcm_f32 checks, resampling to the processor's rate, min/max samples) is
 *   not exported: the test evaluates web-llm's bundle unmodified with one
 *   export line appended to reach it. Nothing of web-llm is copied here.
 * The bodies come from the real pipeline: createClient + scripted engine
 * (engine.requests) → toChatRequest, the adapter's request builder.
 * Decoded mp3/Opus reach web-llm in the same pcm_f32 form at the decoder's
 * rate (44.1 kHz, 48 kHz: test/browser/audio-decode.test.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import * as webllm from "@mlc-ai/web-llm";
import { createClient, type EngineRequest } from "../../src/index.js";
import { createScriptedEngine, scriptedVoiceModel, SCRIPTED_VOICE_AUDIO } from "../../src/testing.js";
import { toChatRequest } from "../../src/engine/webllm/webllm-request.js";
import { toWebLlmRecord } from "../../src/engine/webllm/webllm-engine.js";
import { loadPrebuiltRecords } from "../../src/engine/webllm/prebuilt.js";
import { canonicalLength } from "../../src/audio/limits.js";
import { wavBase64 } from "./support/wav.js";

const GEMMA4 = "gemma-4-E2B-it-q4f32_1-MLC";
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/** An `audio_decode` processor as web-llm parses it from a manifest (the scripted voice record's limits). */
const PROCESSOR = { kind: "audio_decode", format: "pcm_f32", channels: 1, ...SCRIPTED_VOICE_AUDIO };

type DecodeAudioInput = (input: unknown, processor: typeof PROCESSOR) => Float32Array;
let decodeAudioInput: DecodeAudioInput;

beforeAll(async () => {
  const bundle = readFileSync(createRequire(import.meta.url).resolve("@mlc-ai/web-llm"), "utf8");
  if (!bundle.includes("function decodeAudioInput(input, processor)")) throw new Error("decodeAudioInput not found in web-llm's bundle: the bundle changed");
  const file = join(tmpdir(), `webllm-0.2.86-decodeAudioInput-${process.pid}.mjs`);
  writeFileSync(file, `${bundle.replace(/\n\/\/# sourceMappingURL=.*$/m, "")}\nexport { decodeAudioInput as __decodeAudioInput };\n`);
  decodeAudioInput = ((await import(pathToFileURL(file).href)) as { __decodeAudioInput: DecodeAudioInput }).__decodeAudioInput;
}, 60_000);

/** The web-llm body the adapter builds for one user message, through the whole pipeline. */
async function adapterBody(content: unknown[], model = GEMMA4): Promise<{ body: Record<string, unknown>; request: EngineRequest }> {
  const engine = createScriptedEngine({ replies: () => "ok" });
  const client = createClient({ engine, worker: false, models: [scriptedVoiceModel()] });
  await client.chat.completions.create({ model, messages: [{ role: "user", content: content as never }] });
  const request = engine.requests[0];
  return { body: toChatRequest(request, { enableThinkingSwitch: false }), request };
}

const userParts = (body: Record<string, unknown>) => (body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>).at(-1)!.content;

describe("the web-llm record", () => {
  it("keeps Gemma 4's model_manifest (web-llm's switch to its image/audio adapters) and leaves our fields out", async () => {
    const gemma = (await loadPrebuiltRecords()).find((r) => r.model_id === GEMMA4)!;
    expect(gemma.input_modalities).toEqual(["text", "image", "audio"]);
    const sent = toWebLlmRecord(gemma);
    expect(sent.model_manifest).toBe("mlc-model-manifest.json");
    expect(sent).not.toHaveProperty("input_modalities");
    expect(sent).not.toHaveProperty("audio_input");
  });
});

describe("web-llm 0.2.86's request check accepts what the adapter sends", () => {
  const kinds = new Set(["text", "image", "audio"]);
  const check = (body: Record<string, unknown>, supported: Set<string> | undefined) =>
    webllm.postInitAndCheckFieldsChatCompletion(structuredClone(body) as never, GEMMA4, webllm.ModelType.LLM, supported as never);

  it("WAV (base64), pcm_f32 and an image, one text part, no measurement field in the parts", async () => {
    const pcm = new Float32Array(8_000).fill(0.1);
    const { body } = await adapterBody([
      { type: "text", text: "first" },
      { type: "image_url", image_url: { url: PIXEL } },
      { type: "input_audio", input_audio: { data: wavBase64({ seconds: 0.5 }), format: "wav" } },
      { type: "text", text: "second" },
      { type: "input_audio", input_audio: { data: pcm, format: "pcm_f32", sample_rate: 16_000 } },
    ]);
    const parts = userParts(body);
    expect(parts.map((p) => p.type)).toEqual(["text", "image_url", "input_audio", "input_audio"]);
    expect(parts[0]).toEqual({ type: "text", text: "first\nsecond" });
    expect(parts[1]).toEqual({ type: "image_url", image_url: { url: PIXEL } });
    expect(Object.keys(parts[2])).toEqual(["type", "input_audio"]);
    expect(parts[3].input_audio).toMatchObject({ format: "pcm_f32", sample_rate: 16_000 });
    expect(() => check(body, kinds)).not.toThrow();
    // The check is live: a model without an audio adapter refuses the same body.
    expect(() => check(body, new Set(["text", "image"]))).toThrow(/input_audio/);
  });
});

describe("web-llm 0.2.86's decodeAudioInput takes the adapter's audio, and draws the limits where the host does", () => {
  it.each([
    ["WAV 44.1 kHz stereo, 0.5 s", { data: wavBase64({ sampleRate: 44_100, seconds: 0.5, channels: 2 }), format: "wav" }],
    ["WAV 16 kHz mono 32-bit float, 1 s", { data: wavBase64({ sampleRate: 16_000, seconds: 1, float: true }), format: "wav" }],
    ["pcm_f32 at 48 kHz (Opus decoded), 1 s", { data: new Float32Array(48_000).fill(0.2), format: "pcm_f32", sample_rate: 48_000 }],
    ["pcm_f32 at 44.1 kHz (mp3 decoded), 0.3 s", { data: new Float32Array(13_230).fill(0.2), format: "pcm_f32", sample_rate: 44_100 }],
  ])("%s: decoded to the length the host measured, at the processor's rate", async (_, input_audio) => {
    const { body, request } = await adapterBody([{ type: "input_audio", input_audio }]);
    const sent = userParts(body)[0].input_audio;
    const measured = request.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).find((p) => p.type === "input_audio")!;
    const { samples, sampleRate } = (measured as { audio: { samples: number; sampleRate: number } }).audio;
    const canonical = decodeAudioInput(sent, PROCESSOR);
    expect(canonical).toBeInstanceOf(Float32Array);
    expect(canonical.length).toBe(canonicalLength(samples, sampleRate, PROCESSOR.sample_rate_hz));
  });

  it.each([
    ["the shortest accepted", 1_600, true],
    ["one sample too short", 1_599, false],
    ["the longest accepted", 480_000, true],
    ["one sample too long", 480_001, false],
  ])("pcm_f32 at 16 kHz, %s (%i samples): web-llm and the host agree", async (_, length, accepted) => {
    const input_audio = { data: new Float32Array(length), format: "pcm_f32" as const, sample_rate: 16_000 };
    const webllmAccepts = (() => {
      try {
        decodeAudioInput(input_audio, PROCESSOR);
        return true;
      } catch (error) {
        expect((error as Error).name).toBe("AudioInputError");
        return false;
      }
    })();
    expect(webllmAccepts).toBe(accepted);
    const client = createClient({ worker: false, models: [scriptedVoiceModel()] });
    const host = await client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "input_audio", input_audio }] }] }).then(
      () => true,
      (error: { status?: number }) => (error.status === 400 ? false : Promise.reject(error)),
    );
    expect(host).toBe(accepted);
  });

  it("a 24 kHz WAV at the limit once resampled: both count 480000 samples and accept; two 24 kHz frames more are refused by both", async () => {
    for (const [frames, accepted] of [[720_000, true], [720_002, false]] as const) {
      const input_audio = { data: wavBase64({ sampleRate: 24_000, seconds: frames / 24_000 }), format: "wav" as const };
      let webllmAccepts = true;
      try {
        decodeAudioInput(input_audio, PROCESSOR);
      } catch {
        webllmAccepts = false;
      }
      expect(webllmAccepts).toBe(accepted);
      const client = createClient({ worker: false, models: [scriptedVoiceModel()] });
      const host = await client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "input_audio", input_audio }] }] }).then(() => true, () => false);
      expect(host).toBe(accepted);
    }
  }, 60_000);
});
