/// <reference lib="webworker" />
/** The default SharedWorker: one EngineHost for every tab of the origin, configured by the first tab. */
import { exposeSharedEngineHost } from "./shared-host.js";

exposeSharedEngineHost();
