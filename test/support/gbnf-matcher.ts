/**
 * A GBNF reader and whole-text matcher for the tests, written from llama.cpp's
 * grammar parser (llama-grammar.cpp, the one wllama 3.8.1 bundles) and as
 * strict as it: rule names `[A-Za-z0-9-]+`, the escapes `\x \u \U \t \r \n
 * \\ \" \[ \]` only, `-` in a class a range unless before `]`, a newline ends
 * a rule outside parentheses, undefined rules and left recursion refused.
 * It answers, for a sample, whether `root` derives it exactly; llama.cpp's
 * sampler allows exactly the token sequences whose text such a derivation
 * can continue, so this is the language the engine keeps a reply inside.
 */

type Node =
  | { t: "chars"; neg: boolean; ranges: Array<[number, number]> }
  | { t: "ref"; name: string }
  | { t: "alt"; seqs: Node[][] }
  | { t: "rep"; item: Node; min: number; max: number | undefined };

const isWord = (c: string | undefined) => c !== undefined && /[A-Za-z0-9-]/.test(c);

class Parser {
  private i = 0;
  readonly rules = new Map<string, Node>();
  readonly used = new Set<string>();

  constructor(private readonly src: string) {}

  parse(): Map<string, Node> {
    this.space(true);
    while (this.i < this.src.length) {
      const name = this.name();
      this.space(false);
      if (!this.src.startsWith("::=", this.i)) throw new Error(`expecting ::= at ${this.i}`);
      this.i += 3;
      this.space(true);
      this.rules.set(name, this.alternates(false));
      if (this.src[this.i] === "\r") this.i++;
      if (this.i < this.src.length && this.src[this.i] !== "\n") throw new Error(`expecting newline or end at ${this.i}: ${this.src.slice(this.i, this.i + 20)}`);
      this.space(true);
    }
    for (const name of this.used) if (!this.rules.has(name)) throw new Error(`Undefined rule identifier '${name}'`);
    if (!this.rules.has("root")) throw new Error("grammar does not contain a 'root' symbol");
    return this.rules;
  }

  private space(newlineOk: boolean): void {
    for (;;) {
      const c = this.src[this.i];
      if (c === "#") while (this.i < this.src.length && this.src[this.i] !== "\n" && this.src[this.i] !== "\r") this.i++;
      else if (c === " " || c === "\t" || (newlineOk && (c === "\n" || c === "\r"))) this.i++;
      else return;
    }
  }

  private name(): string {
    const start = this.i;
    while (isWord(this.src[this.i])) this.i++;
    if (this.i === start) throw new Error(`expecting name at ${start}: ${this.src.slice(start, start + 20)}`);
    return this.src.slice(start, this.i);
  }

  private char(): number {
    const c = this.src[this.i];
    if (c !== "\\") {
      const cp = this.src.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
      return cp;
    }
    const e = this.src[this.i + 1];
    const hex = (n: number) => {
      const digits = this.src.slice(this.i + 2, this.i + 2 + n);
      if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== n) throw new Error(`expecting ${n} hex chars at ${this.i}`);
      this.i += 2 + n;
      return parseInt(digits, 16);
    };
    switch (e) {
      case "x":
        return hex(2);
      case "u":
        return hex(4);
      case "U":
        return hex(8);
      case "t":
      case "r":
      case "n":
        this.i += 2;
        return { t: 9, r: 13, n: 10 }[e];
      case "\\":
      case '"':
      case "[":
      case "]":
        this.i += 2;
        return e.charCodeAt(0);
      default:
        throw new Error(`unknown escape at ${this.src.slice(this.i, this.i + 6)}`);
    }
  }

  private alternates(nested: boolean): Node {
    const seqs: Node[][] = [this.sequence(nested)];
    while (this.src[this.i] === "|") {
      this.i++;
      this.space(true);
      seqs.push(this.sequence(nested));
    }
    return { t: "alt", seqs };
  }

  private sequence(nested: boolean): Node[] {
    const seq: Node[] = [];
    for (;;) {
      const c = this.src[this.i];
      if (c === '"') {
        this.i++;
        while (this.src[this.i] !== '"') {
          if (this.i >= this.src.length) throw new Error("unexpected end of input");
          const cp = this.char();
          seq.push({ t: "chars", neg: false, ranges: [[cp, cp]] });
        }
        this.i++;
      } else if (c === "[") {
        this.i++;
        const neg = this.src[this.i] === "^";
        if (neg) this.i++;
        const ranges: Array<[number, number]> = [];
        while (this.src[this.i] !== "]") {
          if (this.i >= this.src.length) throw new Error("unexpected end of input");
          const a = this.char();
          if (this.src[this.i] === "-" && this.src[this.i + 1] !== "]") {
            this.i++;
            ranges.push([a, this.char()]);
          } else ranges.push([a, a]);
        }
        this.i++;
        seq.push({ t: "chars", neg, ranges });
      } else if (isWord(c)) {
        const name = this.name();
        this.used.add(name);
        seq.push({ t: "ref", name });
      } else if (c === "(") {
        this.i++;
        this.space(true);
        const inner = this.alternates(true);
        if (this.src[this.i] !== ")") throw new Error(`expecting ')' at ${this.i}`);
        this.i++;
        seq.push(inner);
      } else if (c === ".") {
        this.i++;
        seq.push({ t: "chars", neg: true, ranges: [] });
      } else if (c === "*" || c === "+" || c === "?" || c === "{") {
        if (seq.length === 0) throw new Error(`expecting preceding item to */+/?/{ at ${this.i}`);
        const item = seq.pop()!;
        let min = 0;
        let max: number | undefined;
        if (c === "{") {
          const m = /^\{\s*(\d+)\s*(?:(,)\s*(\d+)?\s*)?\}/.exec(this.src.slice(this.i));
          if (!m) throw new Error(`bad repetition at ${this.i}`);
          min = Number(m[1]);
          max = m[2] ? (m[3] !== undefined ? Number(m[3]) : undefined) : min;
          this.i += m[0].length;
        } else {
          this.i++;
          [min, max] = c === "*" ? [0, undefined] : c === "+" ? [1, undefined] : [0, 1];
        }
        seq.push({ t: "rep", item, min, max });
      } else break;
      this.space(nested);
    }
    return seq;
  }
}

/** A whole-text matcher for a GBNF grammar: throws where llama.cpp's parser would refuse the grammar. */
export function gbnfMatcher(gbnf: string): (text: string) => boolean {
  const rules = new Parser(gbnf).parse();
  return (text) => {
    const cps = [...text].map((ch) => ch.codePointAt(0)!);
    const memo = new Map<string, Set<number>>();
    const ends = (node: Node, pos: number): Set<number> => {
      switch (node.t) {
        case "chars": {
          if (pos >= cps.length) return new Set();
          const cp = cps[pos];
          const inside = node.ranges.some(([a, b]) => cp >= a && cp <= b);
          return inside !== node.neg ? new Set([pos + 1]) : new Set();
        }
        case "ref": {
          const key = `${node.name}@${pos}`;
          const known = memo.get(key);
          if (known === null) throw new Error(`left recursion in '${node.name}'`);
          if (known) return known;
          memo.set(key, null as unknown as Set<number>);
          const result = ends(rules.get(node.name)!, pos);
          memo.set(key, result);
          return result;
        }
        case "alt": {
          const out = new Set<number>();
          for (const seq of node.seqs) {
            let at = new Set([pos]);
            for (const item of seq) {
              const next = new Set<number>();
              for (const p of at) for (const e of ends(item, p)) next.add(e);
              at = next;
            }
            for (const p of at) out.add(p);
          }
          return out;
        }
        case "rep": {
          let at = new Set([pos]);
          const out = new Set<number>(node.min === 0 ? [pos] : []);
          const seen = new Set<string>();
          for (let n = 1; node.max === undefined || n <= node.max; n++) {
            const next = new Set<number>();
            for (const p of at) for (const e of ends(node.item, p)) next.add(e);
            if (next.size === 0) break;
            if (n >= node.min) for (const p of next) out.add(p);
            const key = [...next].sort().join(",");
            if (n > node.min && seen.has(key)) break;
            seen.add(key);
            at = next;
          }
          return out;
        }
      }
    };
    return ends({ t: "ref", name: "root" }, 0).has(cps.length);
  };
}
