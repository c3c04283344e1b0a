/**
 * Small compressed files that claim hours of audio, made in the test: what a
 * hostile page or upload would send to make the worker decode gigabytes of
 * PCM. Nothing here is decodable music; only the headers matter, since the
 * library must refuse these from their headers, before decoding.
 */

/** An Ogg page of `packets` (each under 255 bytes: one lacing value apiece). CRCs are left zero: nothing here is decoded. */
function oggPage(serial: number, sequence: number, packets: Uint8Array[], flags = 0): Uint8Array {
  const body = packets.reduce((n, p) => n + p.length, 0);
  const page = new Uint8Array(27 + packets.length + body);
  const view = new DataView(page.buffer);
  page.set([0x4f, 0x67, 0x67, 0x53], 0); // OggS
  page[5] = flags;
  view.setUint32(14, serial, true);
  view.setUint32(18, sequence, true);
  page[26] = packets.length;
  let at = 27;
  for (const p of packets) page[at++] = p.length;
  for (const p of packets) {
    page.set(p, at);
    at += p.length;
  }
  return page;
}

const join = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * Ogg Opus of `count` copies of `packet` after OpusHead and OpusTags. The
 * default packet is 2 bytes declaring 120 ms (TOC: config 3 = 60 ms frames,
 * code 1 = two frames): 843 795 of them are 2.5 MB and 28 hours.
 */
export function oggOpusBomb(count = 843_795, packet = new Uint8Array([(3 << 3) | 1, 0])): Uint8Array {
  const head = new Uint8Array(19);
  head.set([..."OpusHead"].map((c) => c.charCodeAt(0)), 0);
  head[8] = 1; // version
  head[9] = 1; // channels
  new DataView(head.buffer).setUint32(12, 48_000, true);
  const tags = new Uint8Array([..."OpusTags"].map((c) => c.charCodeAt(0)).concat([0, 0, 0, 0, 0, 0, 0, 0]));
  const pages = [oggPage(1, 0, [head], 2), oggPage(1, 1, [tags])];
  for (let done = 0, sequence = 2; done < count; sequence++) {
    const n = Math.min(255, count - done);
    pages.push(oggPage(1, sequence, Array.from({ length: n }, () => packet)));
    done += n;
  }
  return join(pages);
}

/** An Opus packet that declares no audio at all (code 3, zero frames): only the packet count bounds these. */
export const EMPTY_OPUS_PACKET = new Uint8Array([(3 << 3) | 3, 0]);

/**
 * An mp3 of `count` silent MPEG-1 Layer III frames, 32 kbit/s, 32 kHz, mono:
 * 144 bytes and 36 ms each (side information all zero: no main data, silence).
 * 20 000 of them are 2.9 MB and 12 minutes.
 */
export function silentMp3(count = 20_000): Uint8Array {
  const frame = new Uint8Array(144);
  frame.set([0xff, 0xfb, (1 << 4) | (2 << 2), 0xc0]);
  const out = new Uint8Array(frame.length * count);
  for (let i = 0; i < count; i++) out.set(frame, i * frame.length);
  return out;
}

/** An EBML element: its id bytes, a 1-byte size (payloads under 127 bytes) or unknown size, and the payload. */
function ebml(id: number[], payload: Uint8Array | null): Uint8Array {
  if (payload === null) return new Uint8Array([...id, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]); // unknown size: a live recording's Segment and Cluster
  return join([new Uint8Array(id), new Uint8Array([0x80 | payload.length]), payload]);
}
const text = (s: string) => new Uint8Array([...s].map((c) => c.charCodeAt(0)));

/**
 * WebM with one Opus track and `count` SimpleBlocks, each holding `packet`
 * (default: 2 bytes declaring 120 ms, as in oggOpusBomb): 8 bytes a block.
 */
export function webmOpusBomb(count: number, packet = new Uint8Array([(3 << 3) | 1, 0])): Uint8Array {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], ebml([0x42, 0x82], text("webm")));
  const track = ebml([0xae], join([ebml([0xd7], new Uint8Array([1])), ebml([0x86], text("A_OPUS"))]));
  const tracks = ebml([0x16, 0x54, 0xae, 0x6b], track);
  const block = ebml([0xa3], join([new Uint8Array([0x81, 0, 0, 0x80]), packet]));
  const blocks = new Uint8Array(block.length * count);
  for (let i = 0; i < count; i++) blocks.set(block, i * block.length);
  return join([header, ebml([0x18, 0x53, 0x80, 0x67], null), tracks, ebml([0x1f, 0x43, 0xb6, 0x75], null), ebml([0xe7], new Uint8Array([0])), blocks]);
}
