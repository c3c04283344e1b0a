// The default worker: no `worker:` option.
import { start } from "./app.js";

start();
