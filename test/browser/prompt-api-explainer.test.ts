/**
 * The Prompt API explainer's own examples (n-shot with clone(), a JSON schema
 * and a RegExp responseConstraint, append then prompt, contextoverflow) behave
 * as written on the polyfill, in a window (the pipeline in the library's
 * worker) and inside a worker (the pipeline in that worker).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { createPromptApi, installPromptApi } from "../../src/prompt-api/index.js";
import { EXAMPLE_REPLIES, MODEL, TINY, runExplainerExamples, type ExampleResults } from "./support/prompt-api-examples.js";

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup) step();
  cleanup = [];
});

function expectAsWritten(results: ExampleResults): void {
  expect(results.nShot.result1).toBe("🎨, 🔁");
  expect(results.nShot.result2).toBe("🏆, 🚀");
  // Cloning never prompted the original: its context holds only the initial prompts.
  expect(results.nShot.usage).toBeGreaterThan(20);
  expect(results.nShot.usage).toBeLessThan(results.nShot.window);
  expect(results.schema.rating).toBe(4.5);
  expect(results.append.analysis).toBe("Both images show cats.");
  expect(results.overflow.overflows).toBeGreaterThan(0);
  expect(results.overflow.usage).toBeLessThan(results.overflow.window);
  expect(results.overflow.answered).toMatch(/^Noted \d\.$/);
  // A RegExp constraint: the reply matches (the pipeline compiles it to a grammar).
  expect(results.regexp.error).toBeUndefined();
  expect(results.regexp.value).toBe("gnome.barbarian@example.com");
}

describe("the explainer's examples on the polyfill", () => {
  it("in a window, with the pipeline in the library's worker", async () => {
    const hadNative = typeof (globalThis as { LanguageModel?: unknown }).LanguageModel;
    const client: Client = createClient({ engine: createScriptedEngine({ replies: EXAMPLE_REPLIES }), models: [TINY] });
    cleanup.push(() => client.terminate());
    const installed = installPromptApi({ client, model: MODEL, replace: true });
    cleanup.push(() => installed.uninstall());
    expect((await client.workerInfo()).worker).toBe("dedicated");
    const results = await runExplainerExamples(createPromptApi({ client, model: TINY.model_id }));
    expectAsWritten({ ...results, hadNative });
  });

  it("inside a worker, where Chrome has no LanguageModel", async () => {
    const worker = new Worker(new URL("./support/prompt-api-worker.ts", import.meta.url), { type: "module" });
    cleanup.push(() => worker.terminate());
    const reply = await new Promise<{ ok: boolean; installed?: boolean; results?: ExampleResults; error?: string }>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(event.message));
      worker.postMessage("run");
    });
    expect(reply.error).toBeUndefined();
    expect(reply.results!.hadNative).toBe("undefined");
    expect(reply.installed).toBe(true);
    expectAsWritten(reply.results!);
  });
});
