import { createClient, type Client } from "../../../src/index.js";
import { createScriptedEngine, type ScriptedEngineOptions, type ScriptedEngine } from "../../../src/testing.js";

/** An in-process client over a scripted engine. */
export function scriptedClient(replies: ScriptedEngineOptions["replies"], options: Partial<ScriptedEngineOptions> & { maxQueue?: number; timeoutMs?: number } = {}): { client: Client; engine: ScriptedEngine } {
  const engine = createScriptedEngine({ replies, tokenDelayMs: options.tokenDelayMs, loadDelayMs: options.loadDelayMs });
  const client = createClient({ engine, worker: false, maxQueue: options.maxQueue, timeoutMs: options.timeoutMs });
  return { client, engine };
}

export const user = (content: string) => ({ role: "user" as const, content });
