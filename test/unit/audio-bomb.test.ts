/**
 * Compressed audio that claims far more than the model takes is refused from
 * its headers, before any decoding: an Ogg of tiny 120 ms Opus packets (2.5 MB
 * declaring 28 hours, 19 GB once decoded) and an mp3 of silent frames. Node has
 * no WebCodecs; a stand-in AudioDecoder here counts what reaches it (and
 * yields a little silence per packet), so "before decoding" is what it saw:
 * nothing. The split stops early too (the heap barely grows). Chromium runs
 * the same files through its real decoder in the worker:
 * test/browser/audio-decode.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ApiError } from "../../src/index.js";
import { scriptedVoiceModel } from "../../src/testing.js";
import { oggOpusStream } from "../../src/audio/ogg.js";
import { MAX_AUDIO_PACKETS } from "../../src/audio/packets.js";
import { EMPTY_OPUS_PACKET, oggOpusBomb, silentMp3, webmOpusBomb } from "../support/audio-bombs.js";
import { webmStream } from "../../src/audio/webm.js";
import { toBase64 } from "./support/wav.js";

/** What reached the stand-in decoder. */
const decoder = { configured: 0, packets: 0 };

/** A WebCodecs AudioDecoder that yields 10 ms of silence per packet and counts its calls. */
class CountingDecoder {
  state = "unconfigured";
  constructor(private readonly init: { output: (data: unknown) => void }) {}
  static isConfigSupported = async () => ({ supported: true });
  configure() {
    decoder.configured++;
    this.state = "configured";
  }
  decode() {
    decoder.packets++;
    this.init.output({ numberOfFrames: 480, numberOfChannels: 1, sampleRate: 48_000, copyTo: (plane: Float32Array) => plane.fill(0), close() {} });
  }
  async flush() {}
  close() {
    this.state = "closed";
  }
}

const scope = globalThis as Record<string, unknown>;
beforeAll(() => {
  scope.AudioDecoder = CountingDecoder;
  scope.EncodedAudioChunk = class {
    constructor(readonly init: unknown) {}
  };
});
afterAll(() => {
  delete scope.AudioDecoder;
  delete scope.EncodedAudioChunk;
});
beforeEach(() => {
  decoder.configured = 0;
  decoder.packets = 0;
});

const voiceClient = () => createClient({ worker: false, models: [scriptedVoiceModel()] });

async function refusal(data: Uint8Array, format: "ogg" | "mp3" | "webm"): Promise<ApiError> {
  const client = voiceClient();
  const promise = client.chat.completions.create({
    model: "scripted-voice-MLC",
    messages: [{ role: "user", content: [{ type: "text", text: "what is said?" }, { type: "input_audio", input_audio: { data: toBase64(data), format } }] }],
  });
  return promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (error: ApiError) => error,
  );
}

describe("compressed audio is measured from its headers before decoding", () => {
  it("the Ogg Opus bomb (2.5 MB, 28 h) is a 400 audio_too_long naming the part and the model's limit", async () => {
    const bomb = oggOpusBomb();
    expect(bomb.length).toBeLessThan(3_000_000);
    const error = await refusal(bomb, "ogg");
    expect(error).toMatchObject({ status: 400, code: "audio_too_long", param: "messages[0].content[1]" });
    expect(error.message).toMatch(/Opus packet headers add up to more than 31 s.*scripted-voice-MLC takes at most 30 s/);
    expect(decoder).toEqual({ configured: 0, packets: 0 });
  });

  it("an mp3 of 12 minutes of silent frames is a 400 audio_too_long", async () => {
    const error = await refusal(silentMp3(), "mp3");
    expect(error).toMatchObject({ status: 400, code: "audio_too_long", param: "messages[0].content[1]" });
    expect(error.message).toMatch(/mp3 frame headers/);
    expect(decoder).toEqual({ configured: 0, packets: 0 });
  });

  it("WebM blocks are measured by their Opus TOC too (20 000 blocks of 120 ms: 40 minutes in 160 KB)", async () => {
    const error = await refusal(webmOpusBomb(20_000), "webm");
    expect(error).toMatchObject({ status: 400, code: "audio_too_long", message: expect.stringContaining("Opus packet headers") });
    expect(decoder).toEqual({ configured: 0, packets: 0 });
    // The same container under the limit splits into its packets.
    expect(webmStream(webmOpusBomb(100), { maxSeconds: 31, limit: "" }).packets).toHaveLength(100);
  });

  it("packets that declare no duration are bounded by count", async () => {
    const error = await refusal(oggOpusBomb(MAX_AUDIO_PACKETS + 10, EMPTY_OPUS_PACKET), "ogg");
    expect(error).toMatchObject({ status: 400, code: "audio_too_many_packets" });
    expect(decoder.packets).toBe(0);
  });

  it("audio within the limit reaches the decoder, and a decoder yielding more than the headers declared is cut off", async () => {
    // 100 packets declaring 120 ms (12 s, under the 30 s limit); the stand-in yields 10 ms each, so 1 s reaches the engine.
    const client = voiceClient();
    const reply = await client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: toBase64(oggOpusBomb(100)), format: "ogg" } }] }] });
    expect(reply.choices[0].message.content).toBe("I heard you.");
    expect(decoder).toEqual({ configured: 1, packets: 100 });
    // Headers declaring nothing (zero-frame packets) but a decoder yielding audio: stopped at the budget, never past it.
    const error = await refusal(oggOpusBomb(4_000, EMPTY_OPUS_PACKET), "ogg");
    expect(error).toMatchObject({ status: 400, code: "audio_too_long", message: expect.stringContaining("decodes to more than 31 s") });
  });

  it("splitting the bomb stops at the limit: the heap grows by kilobytes, not the 160 MB of splitting it whole", () => {
    const bomb = oggOpusBomb();
    const before = process.memoryUsage().heapUsed;
    expect(() => oggOpusStream(bomb, { maxSeconds: 31, limit: "the model takes at most 30 s" })).toThrow(/too long/);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024);
  });
});
