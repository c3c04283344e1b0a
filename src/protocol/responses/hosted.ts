/**
 * The 400 for a hosted-only feature of the Responses API (hosted tools, stored
 * prompts, files by id, …): shared by the request validator and the input-item
 * validator, so both say the same thing.
 */
import { ApiError } from "../api-error.js";

const LOCAL = "is not available on a local model: this library runs the model in your browser, with no hosted tools or server-side state beyond its response store.";
export const hosted = (param: string, what: string) => new ApiError({ status: 400, param, code: "unsupported_on_local_model", message: `${what} ${LOCAL}` });
