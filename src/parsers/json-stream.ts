/**
 * String-aware incremental scan of one raw JSON value (the arguments object
 * of a call). It finds where the value ends (braces inside strings do not
 * count), passes the raw text through as it becomes stable, and holds back
 * the tails a later character could still change or that could not be
 * closed into valid JSON: an unfinished literal (`tru`, `1.`), a comma and
 * whitespace, a half escape. So the text it emitted plus `close()` is always
 * valid JSON: a call cut off at the end of output still gets parseable
 * arguments. Each character is looked at once.
 */
import { isWs } from "./partial-marker.js";

type Expect = "value" | "key" | "colon" | "after";

export class JsonValueStream {
  private readonly stack: number[] = []; // open containers: 123 `{` or 91 `[`
  private expect: Expect = "value";
  private inString = false;
  private stringIsKey = false;
  private escape = 0; // 0 none; 1 after `\`; 2..4 inside `\uXXXX`
  private literal = "";
  private held = "";
  private commaHeld = false;
  /** The value is complete. */
  done = false;
  /** The text is not JSON; scanning stopped at the offending character. */
  failed = false;

  /** Nothing but whitespace was seen so far. */
  get started(): boolean {
    return this.inString || this.literal !== "" || this.stack.length > 0 || this.done;
  }

  /**
   * Scans `text[from, to)`, stopping right after the value completes or at a
   * character that cannot continue it. Returns the index reached and the
   * newly stable text.
   */
  /** Index reached by the last `feed`. */
  next = 0;
  private out = "";
  private runStart = 0;

  /** Text[i] is not stable yet: hold it (what was stable before it is emitted). */
  private unstable(text: string, i: number): void {
    if (this.held === "") this.out += text.slice(this.runStart, i);
    this.held += text[i];
    this.runStart = i + 1;
  }

  /** What was held is final: emit it; text from i on is a stable run. */
  private flush(i: number): void {
    if (this.held === "") return;
    this.out += this.held;
    this.held = "";
    this.commaHeld = false;
    this.runStart = i;
  }

  /**
   * Scans `text[from, to)`, stopping right after the value completes or at a
   * character that cannot continue it. Returns the newly stable text; `next`
   * is the index reached.
   */
  feed(text: string, from: number, to: number): string {
    this.out = "";
    this.runStart = from;
    let i = from;
    loop: for (; i < to; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        // Small models write raw control characters and stray backslashes in
        // strings; they are escaped on the way through so the result stays JSON.
        if (this.escape === 1) {
          if (c === 117) {
            this.escape = 2;
            this.unstable(text, i);
            continue;
          }
          this.escape = 0;
          if (isEscapeChar(c)) {
            this.flush(i);
            continue;
          }
          this.held = "\\\\"; // the backslash was a literal one
          this.flush(i);
        } else if (this.escape >= 2) {
          if (isHex(c)) {
            if (this.escape === 5) {
              this.escape = 0;
              this.flush(i);
            } else {
              this.escape++;
              this.unstable(text, i);
            }
            continue;
          }
          this.escape = 0;
          this.held = "\\" + this.held; // `\u12` then not hex: a literal backslash
          this.flush(i);
        }
        if (c === 92) {
          this.escape = 1;
          this.unstable(text, i);
        } else if (c === 34) {
          this.inString = false;
          this.expect = this.stringIsKey ? "colon" : "after";
          if (this.stack.length === 0) {
            this.done = true;
            i++;
            break loop;
          }
        } else if (c < 32) {
          this.out += text.slice(this.runStart, i) + JSON.stringify(text[i]).slice(1, -1);
          this.runStart = i + 1;
        }
        continue;
      }
      if (this.literal !== "") {
        if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c === 46 || c === 43 || c === 45 || c === 69) {
          this.literal += text[i];
          this.unstable(text, i);
          continue;
        }
        if (!isJsonLiteral(this.literal)) {
          this.failed = true;
          break;
        }
        this.literal = "";
        this.flush(i);
        this.expect = "after";
        if (this.stack.length === 0) {
          this.done = true;
          break;
        }
      }
      if (isWs(c)) {
        this.unstable(text, i);
        continue;
      }
      if (c === 44) {
        if (this.expect !== "after" || this.stack.length === 0) {
          this.failed = true;
          break;
        }
        this.unstable(text, i);
        this.commaHeld = true;
        this.expect = this.stack[this.stack.length - 1] === 123 ? "key" : "value";
        continue;
      }
      switch (c) {
        case 123:
        case 91:
          if (this.expect !== "value") break loop;
          this.flush(i);
          this.stack.push(c);
          this.expect = c === 123 ? "key" : "value";
          break;
        case 125:
        case 93: {
          const top = this.stack[this.stack.length - 1];
          const ok = !this.commaHeld &&
            ((c === 125 && top === 123 && (this.expect === "key" || this.expect === "after")) ||
              (c === 93 && top === 91 && (this.expect === "value" || this.expect === "after")));
          if (!ok) break loop;
          this.flush(i);
          this.stack.pop();
          this.expect = "after";
          if (this.stack.length === 0) {
            this.done = true;
            i++;
            break loop;
          }
          break;
        }
        case 58:
          if (this.expect !== "colon") break loop;
          this.flush(i);
          this.expect = "value";
          break;
        case 34:
          if (this.expect !== "value" && this.expect !== "key") break loop;
          this.flush(i);
          this.inString = true;
          this.stringIsKey = this.expect === "key";
          break;
        default:
          if (this.expect !== "value" || !(c === 45 || (c >= 48 && c <= 57) || c === 116 || c === 102 || c === 110)) break loop;
          this.flush(i);
          this.literal = text[i];
          this.unstable(text, i);
      }
    }
    if (i < to && !this.done) this.failed = true;
    if (this.held === "") this.out += text.slice(this.runStart, i);
    this.next = i;
    const out = this.out;
    this.out = "";
    return out;
  }

  /**
   * End of input. A top-level literal completes here (returns its text).
   * Otherwise returns what, appended to everything emitted, makes valid JSON.
   */
  close(): string {
    if (this.done) return "";
    let suffix = "";
    let expect = this.expect;
    if (this.inString) {
      suffix += '"';
      expect = this.stringIsKey ? "colon" : "after";
    } else if (this.literal !== "") {
      if (isJsonLiteral(this.literal)) {
        suffix += this.literal;
        expect = "after";
      }
    } else if (this.commaHeld) expect = "after";
    const top = this.stack.length > 0 ? this.stack[this.stack.length - 1] : 0;
    // A value is owed after `:`, at the top level, or where a half literal (`-`, `tr`) was dropped after a comma.
    if (expect === "colon") suffix += ":null";
    else if (expect === "value" && (top !== 91 || this.literal !== "")) suffix += "null";
    for (let k = this.stack.length - 1; k >= 0; k--) suffix += this.stack[k] === 123 ? "}" : "]";
    this.done = true;
    return suffix;
  }
}

function isEscapeChar(c: number): boolean {
  return c === 34 || c === 92 || c === 47 || c === 98 || c === 102 || c === 110 || c === 114 || c === 116;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** Whether a bare token is a complete JSON literal (number, true, false, null). */
export function isJsonLiteral(text: string): boolean {
  return text === "true" || text === "false" || text === "null" || /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text);
}
