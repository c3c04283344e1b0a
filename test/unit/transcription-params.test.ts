/** `audio.transcriptions` parameters: what is refused and why, the container read from the bytes, and trimmed streamed text. */
import { describe, expect, it } from "vitest";
import { sniffContainer, validateTranscription } from "../../src/protocol/validate-transcription.js";
import { TrimmedText, instruction } from "../../src/host/transcriptions.js";
import { wavBytes } from "../support/wav.js";

const wav = wavBytes();
const bytes = (...values: number[]) => new Uint8Array([...values, ...new Array(16).fill(0)]);
const ascii = (s: string) => bytes(...[...s].map((c) => c.charCodeAt(0)));
const valid = { model: "gemma-4-E2B-it-q4f16_1-MLC", file: { data: wav } };

function refusal(body: unknown): { param: string | null; code: string | null; message: string } {
  try {
    validateTranscription(body);
  } catch (error) {
    const e = error as { status: number; param: string | null; code: string | null; message: string };
    expect(e.status).toBe(400);
    return e;
  }
  throw new Error("expected a 400");
}

describe("transcription parameters", () => {
  it("defaults: json, greedy, not streamed", () => {
    expect(validateTranscription(valid)).toMatchObject({ model: valid.model, audio: { format: "wav" }, responseFormat: "json", temperature: 0, stream: false });
  });

  it.each(["srt", "vtt", "verbose_json", "diarized_json"])("response_format %s → 400 saying it needs timestamps", (format) => {
    const e = refusal({ ...valid, response_format: format });
    expect(e).toMatchObject({ param: "response_format", code: "unsupported_response_format" });
    expect(e.message).toMatch(/timestamps/);
    expect(e.message).toMatch(/"json" or "text"/);
  });

  it("timestamp_granularities and include are refused by name; empty arrays pass", () => {
    expect(refusal({ ...valid, timestamp_granularities: ["word"] }).param).toBe("timestamp_granularities");
    expect(refusal({ ...valid, include: ["logprobs"] }).param).toBe("include");
    expect(() => validateTranscription({ ...valid, include: [], timestamp_granularities: [] })).not.toThrow();
  });

  it("model, file, language, temperature and prompt are checked by name", () => {
    expect(refusal({ file: valid.file }).param).toBe("model");
    expect(refusal({ model: valid.model }).param).toBe("file");
    expect(refusal({ ...valid, file: { data: new Uint8Array(0) } }).message).toMatch(/empty/);
    expect(refusal({ ...valid, language: "English" }).param).toBe("language");
    expect(refusal({ ...valid, temperature: 1.5 }).param).toBe("temperature");
    expect(refusal({ ...valid, temperature: Number.NaN }).param).toBe("temperature");
    expect(refusal({ ...valid, prompt: "x".repeat(5000) }).param).toBe("prompt");
    expect(validateTranscription({ ...valid, language: "FR", temperature: 0.4 })).toMatchObject({ language: "fr", temperature: 0.4 });
  });

  it("the container comes from the bytes, then the type, then the name", () => {
    expect(sniffContainer(wav)).toBe("wav");
    expect(sniffContainer(ascii("OggS"))).toBe("ogg");
    expect(sniffContainer(bytes(0x1a, 0x45, 0xdf, 0xa3))).toBe("webm");
    expect(sniffContainer(ascii("ID3"))).toBe("mp3");
    expect(sniffContainer(bytes(0xff, 0xfb, 0x90))).toBe("mp3"); // MPEG-1 layer III frame
    expect(sniffContainer(bytes(0xff, 0xf1))).toBeUndefined(); // AAC ADTS: layer bits 00
    expect(sniffContainer(ascii("fLaC"))).toBe("flac");
    expect(sniffContainer(bytes(0, 0, 0, 0x20, ...[..."ftypM4A "].map((c) => c.charCodeAt(0))))).toBe("mp4");
    // A WAV named .mp3 is a WAV.
    expect(validateTranscription({ ...valid, file: { data: wav, name: "x.mp3", type: "audio/mpeg" } }).audio.format).toBe("wav");
    const unknown = bytes(1, 2, 3, 4);
    expect(validateTranscription({ ...valid, file: { data: unknown, type: "audio/webm;codecs=opus" } }).audio.format).toBe("webm");
    expect(validateTranscription({ ...valid, file: { data: unknown, name: "take.ogg" } }).audio.format).toBe("ogg");
    expect(refusal({ ...valid, file: { data: unknown, name: "notes.txt", type: "text/plain" } }).message).toMatch(/notes\.txt.*text\/plain.*WAV, MP3, WebM or Ogg/);
    expect(refusal({ ...valid, file: { data: ascii("fLaC") } }).message).toMatch(/FLAC/);
  });
});

describe("the instruction", () => {
  it("names the language and carries the prompt", () => {
    expect(instruction({ language: "fr" })).toMatch(/^Transcribe this speech in French exactly as spoken/);
    expect(instruction({})).toMatch(/^Transcribe this speech exactly as spoken/);
    expect(instruction({ prompt: "Kubernetes, Nginx" })).toMatch(/Kubernetes, Nginx$/);
  });
});

describe("streamed transcript text", () => {
  it("deltas add up to the trimmed text, whatever the split", () => {
    const raw = "  \n Hello  world,\n again. \n";
    for (const size of [1, 2, 3, 5, raw.length]) {
      const text = new TrimmedText();
      let sent = "";
      for (let i = 0; i < raw.length; i += size) sent += text.push(raw.slice(i, i + size));
      expect(sent).toBe(raw.trim());
      expect(text.value).toBe(raw.trim());
    }
  });
});
