/**
 * `POST /responses/compact` on the local model: the older turns go through
 * the ordinary Responses pipeline once more, with a request to summarize them
 * (store: false, so the summarizing turn leaves no trace in the store), and the
 * summary plus the recent turns verbatim become one `compaction` item. With
 * `previous_response_id`, the stored chain is what gets summarized and the
 * request's `input` is kept verbatim.
 */
import type { ResponseObject } from "../protocol/responses/types.js";
import { outputText } from "../protocol/responses/output-text.js";
import { newResponseId } from "../protocol/responses/response-object.js";
import {
  SUMMARY_PROMPT,
  compactionItem,
  emptyUsage,
  splitForCompaction,
  validateCompactRequest,
  type CompactResource,
} from "../protocol/responses/compact.js";

/** What compaction needs from the Responses face: one non-streamed response. */
export interface CreatesResponses {
  create(body: unknown, signal: AbortSignal | undefined, client?: string): Promise<ResponseObject>;
}

export async function compactConversation(face: CreatesResponses, body: unknown, signal?: AbortSignal, client?: string): Promise<CompactResource> {
  const request = validateCompactRequest(body);
  const chained = request.previousResponseId !== null;
  const { older, recent } = chained ? { older: [], recent: request.input } : splitForCompaction(request.input);
  let summary: string | null = null;
  let usage = emptyUsage();
  if (chained || older.length > 0) {
    const response = await face.create(
      {
        model: request.model,
        instructions: request.instructions,
        previous_response_id: request.previousResponseId,
        input: [...older, { type: "message", role: "user", content: SUMMARY_PROMPT }],
        store: false,
        prompt_cache_key: request.promptCacheKey,
        // A summary needs no thinking: on a small model that is most of the time and the window.
        reasoning: { effort: "none" },
      },
      signal,
      client,
    );
    summary = outputText(response).trim();
    usage = response.usage ?? usage;
  }
  return {
    id: newResponseId(),
    object: "response.compaction",
    output: [compactionItem(summary, recent)],
    created_at: Math.floor(Date.now() / 1000),
    usage,
  };
}
