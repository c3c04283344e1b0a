/// <reference lib="webworker" />
/** An app's own worker: it builds its EngineHost itself (a scripted engine) and serves it with exposeEngineHost. */
import { EngineHost, createScriptedEngine, exposeEngineHost } from "../../../src/testing.js";

const long = Array.from({ length: 300 }, (_, i) => `tok${i}`).join(" ");
exposeEngineHost(new EngineHost({ engine: createScriptedEngine({ replies: () => long, tokenDelayMs: 2 }) }));
