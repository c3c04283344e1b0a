/** The demo's pure parts: model output rendered as markdown must never become markup, and the tools must compute right. */
import { describe, expect, it } from "vitest";
import { escapeHtml, renderMarkdown } from "../../demo/src/markdown.js";
import { evaluate, runTool } from "../../demo/src/tools.js";

describe("demo markdown", () => {
  it("escapes HTML in text, code spans and code blocks", () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)> `<b>` **<i>**\n\n```html\n<script>alert(1)</script>\n```');
    expect(html).not.toMatch(/<img|<script|<b>|<i>/);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("<code>&lt;b&gt;</code>");
    expect(html).toContain('<pre data-lang="html"><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>');
  });

  it("renders the common markdown of model replies", () => {
    expect(renderMarkdown("# Title\n\nSome **bold**, *italic* and `code`.\n\n- one\n- two\n\n1. first")).toBe(
      "<h3>Title</h3><p>Some <strong>bold</strong>, <em>italic</em> and <code>code</code>.</p><ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>",
    );
  });

  it("links only http(s) URLs", () => {
    expect(renderMarkdown("[ok](https://example.com) [bad](javascript:alert(1))")).toBe(
      '<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">ok</a> [bad](javascript:alert(1))</p>',
    );
  });

  it("renders an unclosed fence (mid-stream) as code so far", () => {
    expect(renderMarkdown("Look:\n```js\nlet a = 1")).toBe('<p>Look:</p><pre data-lang="js"><code>let a = 1</code></pre>');
  });

  it("escapes quotes for attributes", () => {
    expect(escapeHtml(`"'&`)).toBe("&quot;&#39;&amp;");
  });
});

describe("demo tools", () => {
  it("calculates with precedence, powers and parentheses, without eval", () => {
    expect(evaluate("2+3*4")).toBe(14);
    expect(evaluate("(2+3)*4")).toBe(20);
    expect(evaluate("2^3^2")).toBe(512);
    expect(evaluate("-3 + 10 / 4")).toBe(-0.5);
    expect(() => evaluate("alert(1)")).toThrow(/Unexpected/);
  });

  it("returns errors as results, so the model can react", () => {
    expect(runTool("calculator", '{"expression": "2+2"}')).toEqual({ result: 4 });
    expect(runTool("calculator", "{not json")).toHaveProperty("error");
    expect(runTool("nope", "{}")).toEqual({ error: "Unknown tool nope." });
  });

  it("converts units and refuses mismatched kinds", () => {
    expect(runTool("convert_units", '{"value": 100, "from": "C", "to": "F"}')).toEqual({ value: 212, unit: "F" });
    expect((runTool("convert_units", '{"value": 1, "from": "mi", "to": "km"}') as { value: number }).value).toBeCloseTo(1.609344);
    expect(runTool("convert_units", '{"value": 1, "from": "kg", "to": "km"}')).toEqual({ error: "Cannot convert mass to length." });
  });

  it("searches the built-in dataset", () => {
    const { results } = runTool("search_docs", '{"query": "what is shader-f16"}') as { results: { title: string }[] };
    expect(results[0].title).toBe("shader-f16");
  });
});
