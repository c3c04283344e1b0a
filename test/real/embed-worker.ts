/**
 * The smoke run's custom worker (the public custom-worker path:
 * `createClient({ worker: new Worker(...) })` + `exposeEngineHost`): installs
 * the test-only compat shim for the old model library, then serves the
 * library's own EngineHost exactly as the default worker does.
 */
import { installCompatShim, shimLog, shimOptionsFromName } from "./webllm-compat-shim.js";
import { exposeEngineHost } from "../../src/testing.js";

installCompatShim(shimOptionsFromName((self as unknown as { name: string }).name));
(self as unknown as { __compatShimLog: string[] }).__compatShimLog = shimLog;
exposeEngineHost();
