/// <reference lib="webworker" />
/**
 * The default worker, dedicated or shared: an EngineHost configured by the
 * page, or (started as a SharedWorker) one EngineHost for every tab of the
 * origin, configured by the first tab. One file for both, so an app's bundler
 * emits one worker and one web-llm chunk, whichever the app starts.
 */
import { exposeEngineHost } from "./expose.js";
import { exposeSharedEngineHost } from "./shared-host.js";

const shared = typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope;
if (shared) exposeSharedEngineHost();
else exposeEngineHost();
