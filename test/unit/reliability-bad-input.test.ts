/**
 * Bad input never breaks the engine: 2 000 seeded malformed requests through
 * the JS API and the fetch layer each get the contract's status and an OpenAI
 * error body naming the offending `param`, nothing rejects unhandled, nothing
 * invalid reaches the engine, and a valid request afterwards succeeds.
 */
import { describe, expect, it } from "vitest";
import { ApiError, createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { malformedRequests, seededRandom, type MalformedCase } from "./support/malformed-requests.js";
import { recordUnhandledRejections } from "./support/unhandled.js";

const SEED = 20_261_202;
const COUNT = 2_000;

const TYPE_BY_STATUS: Record<number, string> = { 400: "invalid_request_error", 404: "not_found_error", 413: "invalid_request_error" };

interface Outcome {
  status: number;
  body: unknown;
  headers?: Headers;
}

const unhandled = recordUnhandledRejections();

async function viaFetch(client: ReturnType<typeof createClient>, c: MalformedCase): Promise<Outcome> {
  const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer ignored" },
    body: c.raw ?? JSON.stringify(c.body),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text.slice(0, 200);
  return { status: response.status, body: json, headers: response.headers };
}

async function viaApi(client: ReturnType<typeof createClient>, c: MalformedCase): Promise<Outcome> {
  try {
    const result = await client.chat.completions.create(c.body as never);
    // Should not happen; drain a stream so nothing is left running.
    if (Symbol.asyncIterator in (result as object)) for await (const _ of result as AsyncIterable<unknown>);
    return { status: 200, body: result };
  } catch (error) {
    if (!(error instanceof ApiError)) return { status: -1, body: String(error) };
    return { status: error.status, body: error.toJSON() };
  }
}

/** What is wrong with an outcome, or null. */
function mismatch(c: MalformedCase, outcome: Outcome): string | null {
  const error = (outcome.body as { error?: Record<string, unknown> } | null)?.error;
  if (outcome.status !== c.status) return `status ${outcome.status}, want ${c.status} (${JSON.stringify(error?.message ?? outcome.body).slice(0, 160)})`;
  if (!error) return "no error body";
  if (Object.keys(error).sort().join() !== "code,message,param,type") return `error body keys ${Object.keys(error).join()}`;
  if (typeof error.message !== "string" || error.message.length < 10) return `message ${JSON.stringify(error.message)}`;
  if (error.type !== TYPE_BY_STATUS[c.status]) return `type ${String(error.type)}`;
  if (error.code !== null && typeof error.code !== "string") return `code ${String(error.code)}`;
  if (error.param !== c.param) return `param ${JSON.stringify(error.param)}, want ${JSON.stringify(c.param)}`;
  if (outcome.headers) {
    if (!outcome.headers.get("content-type")?.startsWith("application/json")) return `content-type ${outcome.headers.get("content-type")}`;
    if (outcome.headers.get("x-should-retry") !== "false") return "x-should-retry is not false on a client error";
  }
  return null;
}

describe("bad input", () => {
  it(`${COUNT} seeded malformed requests: each the contract's status with an OpenAI error body naming its param`, async () => {
    const cases = malformedRequests(SEED, COUNT);
    expect(cases).toHaveLength(COUNT);
    // One generation at a time: an over-long prompt with n: 2 reaches the engine once (its first choice fails, the
    // second never starts); a batching engine starts both choices together.
    const engine = createScriptedEngine({ replies: () => "Fine, thanks.", batch: false });
    const client = createClient({ engine, worker: false });
    const layer = seededRandom(SEED + 1);
    const failures: string[] = [];
    const kinds = new Set<string>();
    let fetched = 0;
    for (const [i, c] of cases.entries()) {
      kinds.add(c.kind.replace(/ \(\d+ levels\)$/, ""));
      const useFetch = c.fetchOnly || layer() < 0.5;
      if (useFetch) fetched++;
      const outcome = useFetch ? await viaFetch(client, c) : await viaApi(client, c);
      const wrong = mismatch(c, outcome);
      if (wrong) failures.push(`#${i} ${c.kind} via ${useFetch ? "fetch" : "api"}: ${wrong}`);
    }
    const byKind = [...new Set(failures.map((f) => f.replace(/^#\d+ (.*?)( \(\d+ levels\))? via .*$/, "$1")))];
    expect(failures.slice(0, 25), `${failures.length} of ${COUNT} wrong (seed ${SEED}), kinds: ${byKind.join("; ")}`).toEqual([]);
    // Every kind of damage was exercised, on both layers.
    expect(kinds.size).toBeGreaterThan(80);
    expect(fetched).toBeGreaterThan(COUNT / 2);
    // Only the over-long prompts got as far as the engine (it measures the prompt); nothing else did.
    expect(engine.requests).toHaveLength(cases.filter((c) => c.kind === "huge prompt").length);
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });

    // The engine is unharmed: valid requests succeed on both layers.
    const completion = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "still there?" }] });
    expect(completion.choices[0].message.content).toBe("Fine, thanks.");
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "and now?" }], stream: true }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/"content":"Fine".*data: \[DONE\]\n\n$/s);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled.reasons).toEqual([]);
  }, 180_000);

  it("the generator is deterministic: the same seed gives the same requests", () => {
    const a = malformedRequests(7, 50).map((c) => [c.kind, c.raw ?? JSON.stringify(c.body)]);
    const b = malformedRequests(7, 50).map((c) => [c.kind, c.raw ?? JSON.stringify(c.body)]);
    expect(a).toEqual(b);
    expect(malformedRequests(8, 50).map((c) => c.raw ?? JSON.stringify(c.body))).not.toEqual(a.map(([, body]) => body));
  });
});
