/** The Documents view's retrieval helpers: passage splitting, cosine ranking, the grounded prompt. */
import { describe, expect, it } from "vitest";
import { cosine, groundedMessages, queryText, splitPassages, topPassages } from "../../demo/src/passages.js";

const words = (n: number, w = "word") => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");

describe("demo passages", () => {
  it("splits on blank lines, merges short paragraphs, keeps every word once and in order", () => {
    const text = `Title line\n\n${words(40, "a")}\r\n\r\n${words(10, "b")}\n   \n${words(50, "c")}`;
    const passages = splitPassages(text, "doc.txt");
    expect(passages.every((p) => p.source === "doc.txt")).toBe(true);
    expect(passages.map((p) => p.text).join(" ")).toBe(text.replace(/\s+/g, " ").trim());
    // "Title line" (2 words) is merged into the next paragraph.
    expect(passages[0].text.startsWith("Title line a0")).toBe(true);
    expect(passages.every((p) => p.text.split(" ").length <= 120)).toBe(true);
  });

  it("cuts long paragraphs at sentence ends, and a single very long sentence by words", () => {
    const sentence = (i: number) => `${words(30, `s${i}_`)}.`;
    const long = Array.from({ length: 8 }, (_, i) => sentence(i)).join(" ");
    const passages = splitPassages(long, "x", 100);
    expect(passages.map((p) => p.text.split(" ").length)).toEqual([90, 90, 60]);
    expect(passages.every((p) => p.text.endsWith("."))).toBe(true);
    const run = splitPassages(words(250), "y", 100);
    expect(run.map((p) => p.text.split(" ").length)).toEqual([100, 100, 50]);
  });

  it("ranks by cosine similarity, best first", () => {
    expect(cosine([1, 0], [1, 0])).toBeCloseTo(1);
    expect(cosine([1, 0], [0, 2])).toBe(0);
    expect(cosine([0, 0], [1, 1])).toBe(0);
    const ranked = topPassages([1, 1, 0], [[0, 0, 1], [1, 1, 0], [1, 0, 0]], 2);
    expect(ranked.map((r) => r.index)).toEqual([1, 2]);
    expect(ranked[0].score).toBeCloseTo(1);
  });

  it("the grounded prompt numbers the passages as the view shows them", () => {
    const [system, user] = groundedMessages("How long?", [{ source: "a.txt", text: "Two years." }, { source: "b.txt", text: "Blue." }]);
    expect(system.content).toContain("[1] (a.txt) Two years.\n\n[2] (b.txt) Blue.");
    expect(user).toEqual({ role: "user", content: "How long?" });
  });

  it("arctic-embed queries get the model's query prefix; other models' do not", () => {
    expect(queryText("snowflake-arctic-embed-s-q0f32-MLC-b4", "Why?")).toBe("Represent this sentence for searching relevant passages: Why?");
    expect(queryText("Demo-Embed-MLC-b4", "Why?")).toBe("Why?");
  });
});
