import type { ModelRecord } from "../../models/record.js";
import { importWebLlm } from "./import-webllm.js";
import { withKnownInputs } from "../../models/inputs.js";

/** web-llm's own catalog (`prebuiltAppConfig.model_list`), loaded on first use. */
export async function loadPrebuiltRecords(): Promise<ModelRecord[]> {
  const { prebuiltAppConfig } = await importWebLlm();
  return (prebuiltAppConfig.model_list as unknown as ModelRecord[]).map(withKnownInputs);
}
