/// <reference lib="webworker" />
/** The default dedicated worker: an EngineHost configured by the page. */
import { exposeEngineHost } from "./expose.js";

exposeEngineHost();
