import type { ModelRecord } from "./record.js";
import { importWebLlm } from "../engine/webllm/import-webllm.js";
import { withKnownInputs } from "./inputs.js";

/** web-llm's own catalog (`prebuiltAppConfig.model_list`), loaded on first use. */
export async function loadPrebuiltRecords(): Promise<ModelRecord[]> {
  const { prebuiltAppConfig } = await importWebLlm();
  return (prebuiltAppConfig.model_list as unknown as ModelRecord[]).map(withKnownInputs);
}
