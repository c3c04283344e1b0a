/**
 * Retrieval helpers for the Documents view, pure so they are unit-tested:
 * documents split into passages (paragraphs, merged while short, long ones
 * cut at sentence ends), cosine similarity, and the best passages for a
 * question vector.
 */

export interface Passage {
  /** The document it came from (file name, or "Pasted text 1"). */
  source: string;
  text: string;
}

/** Passages stay well under an embedding model's 512-token window. */
export const MAX_PASSAGE_WORDS = 120;
const MIN_PASSAGE_WORDS = 25;

const wordsIn = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Paragraphs (blank-line separated), short ones merged, long ones cut at sentence ends (or every `maxWords` words). */
export function splitPassages(text: string, source: string, maxWords = MAX_PASSAGE_WORDS): Passage[] {
  const paragraphs = text
    .replace(/\r\n?/g, "\n")
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter(Boolean);
  const pieces = paragraphs.flatMap((p) => (wordsIn(p) <= maxWords ? [p] : cutLong(p, maxWords)));
  const passages: string[] = [];
  for (const piece of pieces) {
    const last = passages.at(-1);
    if (last !== undefined && wordsIn(last) < MIN_PASSAGE_WORDS && wordsIn(last) + wordsIn(piece) <= maxWords) passages[passages.length - 1] = `${last} ${piece}`;
    else passages.push(piece);
  }
  return passages.map((p) => ({ source, text: p }));
}

function cutLong(paragraph: string, maxWords: number): string[] {
  const sentences = paragraph.match(/[^.!?]+[.!?]+["')\]]*\s*|[^.!?]+$/g) ?? [paragraph];
  const out: string[] = [];
  let current = "";
  for (const raw of sentences) {
    const sentence = raw.trim();
    if (wordsIn(sentence) > maxWords) {
      // One sentence longer than a passage: cut it by words.
      if (current) out.push(current);
      current = "";
      const words = sentence.split(/\s+/);
      for (let i = 0; i < words.length; i += maxWords) out.push(words.slice(i, i + maxWords).join(" "));
      continue;
    }
    if (current && wordsIn(current) + wordsIn(sentence) > maxWords) {
      out.push(current);
      current = sentence;
    } else current = current ? `${current} ${sentence}` : sentence;
  }
  if (current) out.push(current);
  return out;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export interface Scored {
  index: number;
  score: number;
}

/** The `k` passages most similar to `query`, best first. */
export function topPassages(query: ArrayLike<number>, vectors: ArrayLike<number>[], k: number): Scored[] {
  return vectors
    .map((vector, index) => ({ index, score: cosine(query, vector) }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, k);
}

/** The chat prompt that grounds the answer on the retrieved passages, numbered as shown. */
export function groundedMessages(question: string, passages: Passage[]): Array<{ role: "system" | "user"; content: string }> {
  const context = passages.map((p, i) => `[${i + 1}] (${p.source}) ${p.text}`).join("\n\n");
  return [
    {
      role: "system",
      content: `Answer the user's question using only the passages below. Cite the passages you use as [1], [2], … If the passages do not contain the answer, say so.\n\n${context}`,
    },
    { role: "user", content: question },
  ];
}

/**
 * Arctic-embed models were trained with this prefix on queries (not on
 * passages); retrieval is better with it (Snowflake's model card).
 */
export function queryText(model: string, question: string): string {
  return /arctic-embed/i.test(model) ? `Represent this sentence for searching relevant passages: ${question}` : question;
}
