/**
 * `encoding_format: "base64"`: the vector as little-endian float32 bytes in
 * base64, exactly what the OpenAI API sends and its SDKs decode
 * (`new Float32Array(bytes.buffer)` on little-endian machines).
 */


export function floatsToBase64(values: ArrayLike<number>): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  // One character per byte, no argument spreading: the vector's length is the request's (its model's) choice.
  const chars: string[] = new Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) chars[i] = String.fromCharCode(bytes[i]!);
  const binary = chars.join("");
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
