/**
 * Image and audio values of Prompt API messages, turned into the chat
 * pipeline's parts: images become `data:` URLs (bytes sniffed, everything
 * else drawn with createImageBitmap), audio becomes `input_audio` (encoded
 * bytes with their sniffed container, or an AudioBuffer's samples mixed to
 * mono `pcm_f32`). A value of the wrong kind is a TypeError, bytes in no
 * known format an EncodingError, as the explainer says.
 */
import { bytesToBase64 } from "../protocol/base64.js";
import type { ContentPart, ImagePart, InputAudioPart } from "../protocol/types.js";
import { sniffContainer } from "../protocol/validate-transcription.js";
import { domError } from "./errors.js";
import type { AudioBufferLike, LanguageModelMessageContent } from "./types.js";

export async function toContentPart(part: LanguageModelMessageContent): Promise<ContentPart> {
  switch (part.type) {
    case "text":
      if (typeof part.value !== "string") throw new TypeError("A `text` content value must be a string.");
      return { type: "text", text: part.value };
    case "image":
      return toImagePart(part.value);
    case "audio":
      return toAudioPart(part.value);
    default:
      throw new TypeError(`Unknown content type ${JSON.stringify((part as { type?: unknown }).type)}: use "text", "image" or "audio".`);
  }
}

function isAudioBuffer(value: unknown): value is AudioBufferLike {
  return typeof value === "object" && value !== null && typeof (value as AudioBufferLike).getChannelData === "function" && typeof (value as AudioBufferLike).numberOfChannels === "number";
}

async function bytesOf(value: unknown): Promise<Uint8Array | null> {
  if (typeof Blob !== "undefined" && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

const startsWith = (bytes: Uint8Array, signature: number[], at = 0) => signature.every((b, i) => bytes[at + i] === b);
const ascii = (bytes: Uint8Array, at: number, text: string) => startsWith(bytes, [...text].map((c) => c.charCodeAt(0)), at);

/** The image sniffing rules of the MIME Sniffing standard, for the formats the models' image processors decode. */
export function sniffImage(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (ascii(bytes, 0, "GIF87a") || ascii(bytes, 0, "GIF89a")) return "image/gif";
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WEBP")) return "image/webp";
  if (ascii(bytes, 0, "BM")) return "image/bmp";
  return null;
}

async function toImagePart(value: unknown): Promise<ImagePart> {
  if (typeof value === "string" || isAudioBuffer(value)) throw new TypeError("An `image` content value must be an image (Blob, BufferSource, ImageBitmap, ImageData, a canvas, an <img> or a VideoFrame).");
  const bytes = await bytesOf(value);
  if (bytes) {
    const mime = sniffImage(bytes);
    if (!mime) throw domError("EncodingError", "The image bytes are in no format the model's image processor decodes (PNG, JPEG, GIF, WebP, BMP).");
    return { type: "image_url", image_url: { url: `data:${mime};base64,${bytesToBase64(bytes)}` } };
  }
  if (typeof value !== "object" || value === null) throw new TypeError("An `image` content value must be an image.");
  return { type: "image_url", image_url: { url: await drawnAsPng(value) } };
}

/** Any ImageBitmapSource, drawn once (the first frame) and encoded as PNG. */
async function drawnAsPng(source: object): Promise<string> {
  if (typeof createImageBitmap !== "function" || typeof OffscreenCanvas !== "function") {
    throw domError("NotSupportedError", "Images other than bytes need createImageBitmap and OffscreenCanvas, which this environment lacks; pass a Blob or the encoded bytes.");
  }
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(source as ImageBitmapSource);
  } catch (error) {
    // A tainted (cross-origin) source is refused outright, unlike createImageBitmap's opaque bitmaps.
    if (error instanceof DOMException && error.name === "SecurityError") throw error;
    throw domError("EncodingError", `The image could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
  }
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext("2d");
  if (!context) throw domError("OperationError", "No 2D canvas context to encode the image.");
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  const png = new Uint8Array(await (await canvas.convertToBlob({ type: "image/png" })).arrayBuffer());
  return `data:image/png;base64,${bytesToBase64(png)}`;
}

async function toAudioPart(value: unknown): Promise<InputAudioPart> {
  if (isAudioBuffer(value)) return { type: "input_audio", input_audio: { data: mixToMono(value), format: "pcm_f32", sample_rate: value.sampleRate } };
  const bytes = await bytesOf(value);
  if (!bytes) throw new TypeError("An `audio` content value must be a Blob, an AudioBuffer or a BufferSource.");
  // The transcription endpoint's sniffer: FLAC and MP4 are named there but not decoded.
  const format = sniffContainer(bytes);
  if (!format || format === "flac" || format === "mp4") throw domError("EncodingError", "The audio bytes are in no container the audio pipeline decodes (WAV, MP3, Ogg, WebM).");
  return { type: "input_audio", input_audio: { data: bytesToBase64(bytes), format } };
}

function mixToMono(buffer: AudioBufferLike): Float32Array {
  const mono = new Float32Array(buffer.length);
  for (let channel = 0; channel < buffer.numberOfChannels; channel++) {
    const samples = buffer.getChannelData(channel);
    for (let i = 0; i < mono.length; i++) mono[i] += samples[i] / buffer.numberOfChannels;
  }
  return mono;
}
