/**
 * A background response resumed after a page reload, on the real engine
 * (driven by scripts/smoke-real.mjs, step `resume`): the library with its
 * default dedicated worker running web-llm, greedy decoding.
 * - phase "uninterrupted": the request run to its end (the reference text);
 * - phase "start": the same request, followed until `cutAfter` text deltas
 *   arrived; the driver then reloads the page, which ends the worker
 *   mid-decode;
 * - phase "finish" (after the reload): a new client on the same response
 *   database; its host resumes the response (the journal's chunks prefilled
 *   with the prompt, decoding goes on) and the phase waits for the end.
 * The driver compares the texts and reports `x_webgpu.resumed` (reply tokens
 * prefilled again, tokens prefilled in all) and the times.
 */
import { createClient, type Client, type ModelRecord } from "../../src/index.js";

type Json = Record<string, unknown>;

export interface ResumeSmokeOptions {
  phase: "uninterrupted" | "start" | "finish";
  modelId: string;
  maxTokens: number;
  cutAfter: number;
  /** The response to wait for (phase "finish"). */
  id?: string;
}

declare global {
  interface Window {
    smokeResume(options: ResumeSmokeOptions): Promise<Json>;
    smokeResumeReport: Json;
  }
}

const DATABASES = { uninterrupted: "smoke-resume-reference", start: "smoke-resume", finish: "smoke-resume" };

function record(modelId: string): ModelRecord {
  return { model: `${location.origin}/model/`, model_id: modelId, model_lib: `${location.origin}/lib/model.wasm`, overrides: { context_window_size: 4096 }, low_resource_required: true };
}

function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string };
  return { name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? error).slice(0, 600) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function defineResumeSmoke(): void {
  let client: Client | null = null;
  window.smokeResume = async (options) => {
    const report: Json = { phase: options.phase };
    window.smokeResumeReport = report;
    const t0 = performance.now();
    client?.terminate();
    client = createClient({ models: [record(options.modelId)], cache: "indexeddb", responsesStore: { databaseName: DATABASES[options.phase] } });
    try {
      if (options.phase === "finish") {
        // The host starts with the client's first call and resumes what its predecessor left.
        let response = await client.responses.retrieve(options.id!);
        while (response.status === "in_progress" || response.status === "queued") {
          await sleep(1000);
          response = await client.responses.retrieve(options.id!);
        }
        Object.assign(report, { ms: Math.round(performance.now() - t0), status: response.status, text: response.output_text, usage: response.usage, x_webgpu: response.x_webgpu, incomplete: response.incomplete_details, error: response.error });
        console.info(`[resume] finish: ${JSON.stringify(report).slice(0, 600)}`);
        return report;
      }
      await client.models.load(options.modelId);
      report.loadMs = Math.round(performance.now() - t0);
      const created = await client.responses.create({ model: options.modelId, input: "Count.", temperature: 0, max_output_tokens: options.maxTokens, background: true });
      report.id = created.id;
      let text = "";
      let deltas = 0;
      for await (const event of await client.responses.retrieve(created.id, { stream: true })) {
        if (event.type === "response.output_text.delta") {
          text += event.delta;
          deltas++;
          console.info(`[resume] ${options.phase}: delta ${deltas} ${JSON.stringify(event.delta)} at ${Math.round(performance.now() - t0)} ms`);
          // Leave the page to be reloaded mid-decode; the event log is written every 100 ms.
          if (options.phase === "start" && deltas >= options.cutAfter) {
            await sleep(500);
            Object.assign(report, { ms: Math.round(performance.now() - t0), textBeforeCut: text, deltasBeforeCut: deltas });
            return report;
          }
        }
        if (event.type === "response.completed" || event.type === "response.incomplete") {
          const response = event.response;
          Object.assign(report, { ms: Math.round(performance.now() - t0), status: response.status, text: response.output_text ?? text, usage: response.usage, x_webgpu: response.x_webgpu });
        }
      }
      report.text ??= text;
      return report;
    } catch (error) {
      report.error = errorOf(error);
      return report;
    }
  };
}
