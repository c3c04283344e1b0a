/**
 * `encoding_format: "base64"`: the vector as little-endian float32 bytes in
 * base64, exactly what the OpenAI API sends and its SDKs decode
 * (`new Float32Array(bytes.buffer)` on little-endian machines).
 */

const CHUNK = 0x8000;

export function floatsToBase64(values: ArrayLike<number>): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  let binary = "";
  // String.fromCharCode takes its arguments on the stack: go in chunks.
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

export function base64ToFloats(text: string): number[] {
  const binary = atob(text);
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) view.setUint8(i, binary.charCodeAt(i));
  const out: number[] = [];
  for (let i = 0; i + 4 <= binary.length; i += 4) out.push(view.getFloat32(i, true));
  return out;
}
