/** The weight cache's administration (`client.cache.*`) on the pipeline core's cache manager and catalog. */
import type { CachedModel, CacheUsage } from "../cache/manager.js";
import type { PipelineCore } from "./pipeline-core.js";

export class CacheFace {
  constructor(private readonly core: PipelineCore) {}

  /** Cached models of this host's backend: id, bytes, complete, lastUsed. */
  async list(): Promise<CachedModel[]> {
    return (await this.core.cacheManager()).list();
  }

  /** Removes every file of a model (by id or alias) from web-llm's cache. */
  async delete(id: string): Promise<{ id: string; deleted: boolean }> {
    const catalog = await this.core.catalog();
    const record = catalog.find(id) ?? (await this.core.features().then((features) => catalog.resolve(id, features)).catch(() => undefined));
    const modelId = record?.model_id ?? id;
    // Which files the record has follows the layout its engine loads (MLC's, or a GGUF's).
    const layout = record ? ((await this.core.capabilitiesOf(record)).prefetch ?? undefined) : undefined;
    return { id: modelId, deleted: await (await this.core.cacheManager()).delete(modelId, record, layout) };
  }

  /** Empties web-llm's cache for this backend. */
  async clear(): Promise<void> {
    await (await this.core.cacheManager()).clear();
  }

  /** Per-model bytes, the origin's usage and quota, and whether storage is persistent. */
  async usage(): Promise<CacheUsage> {
    return (await this.core.cacheManager()).usage();
  }
}
