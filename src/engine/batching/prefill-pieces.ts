/**
 * Where a row's prefill waits for its steps: web-llm feeds a prompt in its
 * own chunks (up to the model's prefill chunk size), and the step scheduler in
 * chunks of `prefillChunkTokens`; a web-llm chunk is cut where the prompt
 * crosses a multiple of the scheduler's chunk, so each piece belongs to one step.
 * And where a row's prefill can start: the longest prompt prefix another row
 * of its key already holds.
 */
import { commonPrefix } from "../prompt-cache/policy.js";

/** What longestRowPrefix reads of a row. */
export interface PrefixHolder {
  key: string | undefined;
  left: boolean;
  /** The prompt its sequence holds once its prefill is done (null before). */
  prompt: readonly number[] | null;
}

/**
 * The row of `row`'s key, other than it, whose prefilled prompt shares the
 * most of `tokens` (at most `bound`, and one token short of that row's
 * prompt, which it may still extend), and how much; `donor` null when none shares a token.
 */
export function longestRowPrefix<R extends PrefixHolder>(rows: Iterable<R>, row: R, tokens: readonly number[], bound: number): { donor: R | null; shared: number } {
  let donor: R | null = null;
  let shared = 0;
  for (const other of rows) {
    if (other === row || other.left || !other.prompt || other.key !== row.key) continue;
    const common = Math.min(commonPrefix(other.prompt, tokens), bound, other.prompt.length - 1);
    if (common > shared) [donor, shared] = [other, common];
  }
  return { donor, shared };
}

/** A piece of a prefill chunk: web-llm's input elements and their token count. */
interface Piece {
  data: unknown[];
  length: number;
}

/**
 * Splits web-llm's prefill chunk (token arrays, or an image element, which
 * is never split) where the prompt crosses a multiple of `chunk` tokens,
 * counting from `fed` tokens already fed.
 */
export function splitAtSteps(inputData: unknown[], inputDataLen: number, fed: number, chunk: number): Piece[] {
  if (!Number.isFinite(chunk)) return [{ data: inputData, length: inputDataLen }];
  const pieces: Piece[] = [];
  let current: Piece = { data: [], length: 0 };
  let position = fed;
  const close = () => {
    if (current.length > 0) pieces.push(current);
    current = { data: [], length: 0 };
  };
  for (const element of inputData) {
    if (!Array.isArray(element)) {
      // An image: its size is the chunk's length less its tokens (web-llm's count); kept whole.
      const tokens = inputData.reduce<number>((n, e) => n + (Array.isArray(e) ? e.length : 0), 0);
      const size = inputDataLen - tokens;
      current.data.push(element);
      current.length += size;
      position += size;
      continue;
    }
    let at = 0;
    while (at < element.length) {
      const room = chunk - (position % chunk);
      const take = Math.min(room, element.length - at);
      current.data.push(element.slice(at, at + take));
      current.length += take;
      position += take;
      at += take;
      if (position % chunk === 0) close();
    }
  }
  close();
  return pieces;
}
