// Whether a worker of the extension may compile WebAssembly (the manifest's CSP decides).
import { wasmProbe } from "./chat.js";

wasmProbe().then((result) => postMessage(result));
