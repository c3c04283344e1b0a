// The app hosts the engine worker itself (what esbuild and Rollup users do).
import { start } from "./app.js";

start(new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" }));
