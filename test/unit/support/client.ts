import { createClient, type ApiError, type Client } from "../../../src/index.js";
import { createScriptedEngine, type ScriptedEngineOptions, type ScriptedEngine } from "../../../src/testing.js";

/** An in-process client over a scripted engine. */
export function scriptedClient(replies: ScriptedEngineOptions["replies"], options: Partial<ScriptedEngineOptions> & { maxQueue?: number; timeoutMs?: number } = {}): { client: Client; engine: ScriptedEngine } {
  const engine = createScriptedEngine({ replies, tokenDelayMs: options.tokenDelayMs, loadDelayMs: options.loadDelayMs, ...(options.batch !== undefined ? { batch: options.batch } : {}) });
  const client = createClient({ engine, worker: false, maxQueue: options.maxQueue, timeoutMs: options.timeoutMs });
  return { client, engine };
}

export const user = (content: string) => ({ role: "user" as const, content });

/** The error `promise` rejects with (fails the test when it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("expected a refusal");
}
