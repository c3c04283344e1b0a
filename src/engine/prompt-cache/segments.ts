/**
 * Copy-on-write storage bookkeeping for the prompt-cache policy: each sequence
 * is a list of segments (runs of tokens), and a segment object shared by
 * several sequences is stored once — as the paged KV cache stores the prefix
 * a fork shares with its parent. Only lengths are tracked; the policy keeps
 * the token ids.
 */
class Segment {
  constructor(public len: number) {}
}

export class SegmentStore {
  private readonly seqs = new Map<number, Segment[]>();

  add(id: number): void {
    this.seqs.set(id, []);
  }

  remove(id: number): void {
    this.seqs.delete(id);
  }

  length(id: number): number {
    return (this.seqs.get(id) ?? []).reduce((n, s) => n + s.len, 0);
  }

  /** `child` shares `parent`'s first `at` tokens. */
  fork(parent: number, child: number, at: number): void {
    const n = this.cut(parent, at);
    this.seqs.set(child, this.seqs.get(parent)!.slice(0, n));
  }

  /** Drops `count` tokens from the end of `id` (shared storage stays for the others). */
  popn(id: number, count: number): void {
    if (count <= 0) return;
    const n = this.cut(id, this.length(id) - count);
    this.seqs.set(id, this.seqs.get(id)!.slice(0, n));
  }

  /** Appends `count` tokens to `id`: into its last segment when no other sequence holds it. */
  append(id: number, count: number): void {
    if (count <= 0) return;
    const segs = this.seqs.get(id)!;
    const last = segs[segs.length - 1];
    if (last && this.owners(last) === 1) last.len += count;
    else segs.push(new Segment(count));
  }

  /** Extra storage (tokens, rounded to pages) that appending `count` tokens to `id` would take. */
  appendCost(id: number, count: number, page: number): number {
    const segs = this.seqs.get(id)!;
    const last = segs[segs.length - 1];
    if (last && this.owners(last) === 1) return pages(last.len + count, page) - pages(last.len, page);
    return pages(count, page);
  }

  /** Storage in use: every distinct segment once, rounded up to whole pages. */
  usage(page: number): number {
    const distinct = new Set<Segment>();
    for (const segs of this.seqs.values()) for (const s of segs) distinct.add(s);
    let total = 0;
    for (const s of distinct) total += pages(s.len, page);
    return total;
  }

  clone(): SegmentStore {
    const copy = new SegmentStore();
    const map = new Map<Segment, Segment>();
    for (const [id, segs] of this.seqs) {
      copy.seqs.set(
        id,
        segs.map((s) => map.get(s) ?? map.set(s, new Segment(s.len)).get(s)!),
      );
    }
    return copy;
  }

  private owners(segment: Segment): number {
    let n = 0;
    for (const segs of this.seqs.values()) if (segs.includes(segment)) n++;
    return n;
  }

  /** Makes a segment boundary at token `at` of `id` (splitting a segment for every holder); returns how many of `id`'s segments lie before it. */
  private cut(id: number, at: number): number {
    const segs = this.seqs.get(id)!;
    let pos = 0;
    for (let i = 0; i < segs.length; i++) {
      if (pos === at) return i;
      const s = segs[i];
      if (at < pos + s.len) {
        const head = new Segment(at - pos);
        const tail = new Segment(s.len - head.len);
        for (const other of this.seqs.values()) {
          const j = other.indexOf(s);
          if (j >= 0) other.splice(j, 1, head, tail);
        }
        return i + 1;
      }
      pos += s.len;
    }
    return segs.length;
  }
}

const pages = (tokens: number, page: number) => Math.ceil(tokens / page) * page;
