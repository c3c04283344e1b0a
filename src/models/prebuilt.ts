import type { ModelRecord } from "./record.js";

/** web-llm's own catalog (`prebuiltAppConfig.model_list`), loaded on first use. */
export async function loadPrebuiltRecords(): Promise<ModelRecord[]> {
  const { prebuiltAppConfig } = await import("@mlc-ai/web-llm");
  return prebuiltAppConfig.model_list as unknown as ModelRecord[];
}
