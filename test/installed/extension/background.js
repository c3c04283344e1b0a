// The extension's service worker. "offscreen": relays the popup's request to an offscreen document
// that hosts createClient (the recipe for pages). "service-worker": runs createClient() right here
// (no Worker in a service worker, so the engine runs in this thread) from webgpu-openai/static,
// which loads nothing with import(): a service worker may not.
import { createClient } from "webgpu-openai/static";
import { chat, failure, wasmProbe } from "./chat.js";
import { record } from "./record.js";

let client;

async function inServiceWorker() {
  const wasm = await wasmProbe();
  client ??= createClient({ models: [record] });
  try {
    const result = await chat(client);
    // The prebuilt catalog comes from web-llm itself: proof that web-llm is in this bundle and runs here.
    const catalog = (await client.models.list()).data.length;
    return { ...result, catalog, wasm };
  } catch (error) {
    return { ...failure(error), wasm };
  }
}

async function viaOffscreen(worker) {
  const url = `offscreen.html?worker=${worker}`;
  const existing = await chrome.runtime.getContexts({ contextTypes: ["OFFSCREEN_DOCUMENT"] });
  if (existing.length && !existing[0].documentUrl.endsWith(url)) await chrome.offscreen.closeDocument();
  if (!existing.length || !existing[0].documentUrl.endsWith(url)) {
    await chrome.offscreen.createDocument({ url, reasons: ["WORKERS"], justification: "runs the local model's engine worker" });
  }
  return chrome.runtime.sendMessage({ target: "offscreen" });
}

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.target !== "background") return false;
  const work = message.mode === "service-worker" ? inServiceWorker() : viaOffscreen(message.worker);
  work.then(reply, (error) => reply(failure(error)));
  return true; // answers asynchronously
});
