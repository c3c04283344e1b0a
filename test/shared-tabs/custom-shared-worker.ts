/// <reference lib="webworker" />
/**
 * An app's own SharedWorker (createClient({ worker: new SharedWorker(...) })):
 * it builds its host with a scripted engine and serves it to every tab with
 * exposeSharedEngineHost. For the tests it answers "report?" on a
 * BroadcastChannel with the engine's load count and the prompts it received.
 */
import { EngineHost, createScriptedEngine, exposeSharedEngineHost } from "../../src/testing.js";

const reply = Array.from({ length: 40 }, (_, i) => `c${i}`).join(" ");
const engine = createScriptedEngine({ replies: () => reply, tokenDelayMs: 5, loadDelayMs: 1200 });
exposeSharedEngineHost(new EngineHost({ engine }));

const channel = new BroadcastChannel("shared-tabs-report");
channel.onmessage = () => {
  channel.postMessage({ loads: [...engine.loads], prompts: engine.requests.map((r) => r.messages.map((m) => (typeof m.content === "string" ? m.content : ""))) });
};
