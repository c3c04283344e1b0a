/** Model id → family. */
import type { Family } from "./types.js";
import { plainFamily } from "./plain.js";
import type { ModelRecord } from "../models/record.js";

export function familyOf(record: Pick<ModelRecord, "model_id" | "family">): Family {
  return plainFamily;
}
