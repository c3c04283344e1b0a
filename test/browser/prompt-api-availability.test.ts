/**
 * LanguageModel.availability() on the real web-llm path in headless Chromium
 * (WebGPU on SwiftShader, which lacks shader-f16), nothing downloaded: a
 * q4f32 model that fits is "downloadable", a q4f16 one "unavailable", and an
 * expected input the model cannot take "unavailable"; create() refuses the
 * q4f16 one with NotSupportedError before downloading anything.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { createPromptApi } from "../../src/prompt-api/index.js";

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

describe("availability() from the GPU probe, the model's fit and the weight cache", () => {
  it("downloadable, unavailable without shader-f16, unavailable for an input the model cannot take", async () => {
    const client = createClient({ worker: false });
    clients.push(client);
    const gpu = await client.gpu.info();
    expect(gpu.available).toBe(true);
    expect(gpu.available && gpu.info.features).not.toContain("shader-f16");

    const f32 = createPromptApi({ client, model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC" });
    expect(await f32.availability()).toBe("downloadable");
    expect(await f32.availability({ expectedInputs: [{ type: "image" }] })).toBe("unavailable");

    const f16 = createPromptApi({ client, model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC" });
    expect(await f16.availability()).toBe("unavailable");
    const refused = await f16.create().catch((error: DOMException) => error);
    expect(refused).toBeInstanceOf(DOMException);
    expect((refused as DOMException).name).toBe("NotSupportedError");
    expect((refused as DOMException).message).toMatch(/shader-f16/);
    // Nothing of it was downloaded (other test files share this origin's cache, so only this model is looked for).
    expect((await client.cache.list()).map((entry) => entry.id)).not.toContain("Qwen2.5-0.5B-Instruct-q4f16_1-MLC");
  });

  it("without a model option, the catalog's best fit for this adapter (a q4f32 model here) is the one asked", async () => {
    const client = createClient({ worker: false });
    clients.push(client);
    const seen: string[] = [];
    const observed: Client = { ...client, models: { ...client.models, status: (id) => (seen.push(id), client.models.status(id)) } };
    expect(await createPromptApi({ client: observed }).availability()).toBe("downloadable");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/-q4f32_1-MLC$/);
  });
});
