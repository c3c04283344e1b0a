/**
 * Base64 → bytes for audio data (`input_audio.data`), with `atob`: data that
 * is not base64 is audio that cannot be read (400 naming the part). Bytes
 * never go into call arguments (a request decides how many there are).
 */
import { AudioInputError } from "./errors.js";

export function base64ToBytes(base64: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(base64);
  } catch {
    throw new AudioInputError("The audio data is not valid base64.");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
