// The offscreen document: a page (it has Worker) that hosts createClient for the extension.
// ?worker=hosted: the engine worker the extension bundles itself (webgpu-openai/worker);
// ?worker=default: the library's default worker, which esbuild does not emit.
import { createClient } from "webgpu-openai";
import { chat, failure, wasmProbe } from "./chat.js";
import { record } from "./record.js";

const hosted = new URLSearchParams(location.search).get("worker") === "hosted";
const client = createClient(
  hosted ? { models: [record], worker: new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" }) } : { models: [record] },
);

function workerWasmProbe() {
  return new Promise((done) => {
    const probe = new Worker(new URL("./wasm-probe-worker.js", import.meta.url), { type: "module" });
    probe.onmessage = (event) => done(event.data);
    probe.onerror = (event) => done(`worker error: ${event.message}`);
  });
}

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.target !== "offscreen") return false;
  (async () => {
    const wasm = { document: await wasmProbe(), worker: await workerWasmProbe() };
    try {
      return { ...(await chat(client)), wasm };
    } catch (error) {
      return { ...failure(error), wasm };
    }
  })().then(reply);
  return true;
});
