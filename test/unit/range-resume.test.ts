/**
 * Resuming a GGUF inside the file (cache/range-resume.ts): the Content-Range
 * of a 206 is read strictly, and the stored bytes are continued only by a 206
 * for exactly their rest of the same file (start, total, validator); a 200 is
 * the whole file again, anything else asks for it again without Range. The
 * browser tests (test/browser/gguf-resume.test.ts) run it against a server.
 */
import { describe, expect, it } from "vitest";
import { decideResume, keepable, parseContentRange, rangeHeaders, validatorOf, type StoredPrefix } from "../../src/cache/range-resume.js";

const headers = (h: Record<string, string>) => new Headers(h);
const prefix: StoredPrefix = { bytes: 1000, total: 5000, validator: { etag: '"abc"', lastModified: "Sat, 05 Dec 2026 10:00:00 GMT" } };
const partial = (h: Record<string, string>) => ({ status: 206, headers: headers(h) });

describe("Content-Range", () => {
  it("reads a satisfied byte range with its total, or an unknown total", () => {
    expect(parseContentRange("bytes 1000-4999/5000")).toEqual({ start: 1000, end: 4999, total: 5000 });
    expect(parseContentRange("Bytes 0-0/1")).toEqual({ start: 0, end: 0, total: 1 });
    expect(parseContentRange("bytes 10-19/*")).toEqual({ start: 10, end: 19, total: null });
  });

  it("refuses what is not one satisfied range inside the file", () => {
    for (const value of [null, "", "bytes */5000", "bytes 1000-/5000", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1/2, 4-5/6", "bytes -1-2/3", "bytes 0-99999999999999999999/1"]) {
      expect(parseContentRange(value), String(value)).toBeNull();
    }
  });
});

describe("the validator kept with stored bytes", () => {
  it("a strong ETag and Last-Modified; a weak ETag promises no identical bytes and is left out", () => {
    expect(validatorOf(headers({ etag: '"x"', "last-modified": "Mon" }))).toEqual({ etag: '"x"', lastModified: "Mon" });
    expect(validatorOf(headers({ etag: 'W/"x"' }))).toEqual({});
  });

  it("bytes are kept for a later resume only where the file can be recognised again", () => {
    expect(keepable({ etag: '"x"' }, false)).toBe(true);
    expect(keepable({ lastModified: "Mon" }, false)).toBe(true);
    expect(keepable({}, true)).toBe(true);
    expect(keepable({}, false)).toBe(false);
  });

  it("the request asks for the rest from the first byte not stored, with Range only (If-Range would need a CORS preflight)", () => {
    expect(rangeHeaders(prefix)).toEqual({ range: "bytes=1000-" });
  });
});

describe("what the answer to a Range request allows", () => {
  it("continues on a 206 for exactly the rest of the same file", () => {
    expect(decideResume(prefix, partial({ "content-range": "bytes 1000-4999/5000", etag: '"abc"' }))).toEqual({ action: "continue" });
    // Last-Modified decides when no ETag was stored.
    const byDate = { ...prefix, validator: { lastModified: "Mon" } };
    expect(decideResume(byDate, partial({ "content-range": "bytes 1000-4999/5000", "last-modified": "Mon" }))).toEqual({ action: "continue" });
  });

  it("uses a 200's body as the whole file (the server ignored Range)", () => {
    expect(decideResume(prefix, { status: 200, headers: headers({ etag: '"abc"' }) }).action).toBe("whole");
  });

  it("asks again without Range when the 206 starts elsewhere, ends early, or the file's size or version changed", () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ "content-range": "bytes 0-4999/5000", etag: '"abc"' }, /starts at byte 0, not at 1000/],
      [{ "content-range": "bytes 1001-4999/5000", etag: '"abc"' }, /starts at byte 1001/],
      [{ "content-range": "bytes 1000-1999/5000", etag: '"abc"' }, /ends at byte 1999/],
      [{ "content-range": "bytes 1000-5999/6000", etag: '"abc"' }, /size changed from 5000 to 6000/],
      [{ "content-range": "bytes 1000-4999/*", etag: '"abc"' }, /size changed/],
      [{ "content-range": "bytes 1000-4999/5000", etag: '"def"' }, /changed on the server/],
      [{ "content-range": "bytes 1000-4999/5000" }, /changed on the server/],
      [{ "content-range": "bytes 1000-4999/5000", etag: 'W/"abc"' }, /changed on the server/],
      [{ etag: '"abc"' }, /no usable Content-Range/],
    ];
    for (const [h, reason] of cases) {
      const decision = decideResume(prefix, partial(h));
      expect(decision.action, JSON.stringify(h)).toBe("refetch");
      expect(decision.action !== "continue" && decision.reason, JSON.stringify(h)).toMatch(reason);
    }
    const byDate = { ...prefix, validator: { lastModified: "Mon" } };
    expect(decideResume(byDate, partial({ "content-range": "bytes 1000-4999/5000", "last-modified": "Tue" })).action).toBe("refetch");
  });

  it("asks again without Range on a 416 or an error status", () => {
    expect(decideResume(prefix, { status: 416, headers: headers({ "content-range": "bytes */5000" }) })).toMatchObject({ action: "refetch", reason: expect.stringMatching(/416/) });
    expect(decideResume(prefix, { status: 503, headers: headers({}) }).action).toBe("refetch");
  });
});
