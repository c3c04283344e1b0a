// The default worker: no `worker:` option; `?worker=shared` the library's SharedWorker.
import { start } from "./app.js";

start(new URLSearchParams(location.search).get("worker") === "shared" ? "shared" : undefined);
