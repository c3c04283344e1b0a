const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `length` random alphanumerics from the platform CSPRNG. */
export function randomId(length: number): string {
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  let id = "";
  for (const byte of bytes) id += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return id;
}

export const newCompletionId = () => `chatcmpl-${randomId(24)}`;
export const newRequestId = () => `req_${randomId(24)}`;
