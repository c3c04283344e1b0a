/** A container split into what WebCodecs' AudioDecoder takes: its config and the codec packets in order. */
export interface CodecStream {
  config: { codec: string; sampleRate: number; numberOfChannels: number; description?: Uint8Array };
  /** `timestamp` in microseconds. */
  packets: Array<{ data: Uint8Array; timestamp: number }>;
}

/** Samples (at 48 kHz) in one Opus packet, from its TOC byte (RFC 6716 §3.1). */
export function opusPacketSamples(packet: Uint8Array): number {
  if (packet.length === 0) return 0;
  const config = packet[0] >> 3;
  const frameMs = config < 12 ? [10, 20, 40, 60][config % 4] : config < 16 ? [10, 20][config % 2] : [2.5, 5, 10, 20][config % 4];
  const code = packet[0] & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : packet.length > 1 ? packet[1] & 0x3f : 0;
  return frameMs * 48 * frames;
}
