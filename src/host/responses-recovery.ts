/**
 * Recovery of the stored responses whose worker stopped mid-way (a reload,
 * the last tab of a shared worker closed; owner-lock.ts tells them from ones
 * another live worker generates). A background one resumes where `canResume`
 * allows (its model ready without a download), from its journaled request and
 * the events it had sent; a stored stream, whose reader went with its page,
 * and one that cannot resume end `incomplete` with the output they had sent.
 * None stays `in_progress`. The Responses face starts it on its first use.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ResponsesRequest } from "../protocol/responses/validate.js";
import { itemsToMessages } from "../protocol/responses/items.js";
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import { interruptedResponse, isUnfinished } from "../protocol/responses/response-object.js";
import type { ResponseObject } from "../protocol/responses/types.js";
import type { Family } from "../families/types.js";
import type { GeneratedChunk } from "../engine/types.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import { ResponseOwner } from "../store/owner-lock.js";
import { checkEventLog, nextSequenceAfter, outputFromEvents } from "./event-replay.js";
import { usesMcp } from "../protocol/responses/mcp-items.js";
import type { ResponseRuns } from "./responses-run.js";

/** Whether `model` loads without a download (a resumed response never downloads). */
export type CanResume = (model: string) => Promise<boolean>;

/** Finds the interrupted responses in the store and resumes or ends each (under its resume lock, so one host does it). */
export async function recoverInterrupted<P extends { family: Family; resumeFrom?: GeneratedChunk[] }>(
  runs: ResponseRuns<P>,
  store: QueuedResponseStore,
  owner: ResponseOwner,
  canResume: CanResume,
): Promise<void> {
  if (!ResponseOwner.available) return;
  await owner.held;
  const alive = await ResponseOwner.alive();
  for (const response of await store.list()) {
    if (!isUnfinished(response.status)) continue;
    const entry = await store.get(response.id).catch(() => undefined);
    if (!entry?.journal || alive.has(entry.journal.owner)) continue;
    void ResponseOwner.exclusively(response.id, () => resume(response.id, runs, store, owner, canResume)).catch((error) => {
      console.warn(`webgpu-openai: could not recover response '${response.id}': ${(error as Error)?.message ?? error}`);
    });
  }
}

async function resume<P extends { family: Family; resumeFrom?: GeneratedChunk[] }>(
  id: string,
  runs: ResponseRuns<P>,
  store: QueuedResponseStore,
  owner: ResponseOwner,
  canResume: CanResume,
): Promise<void> {
  // Read again under the resume lock: another host may have resumed or ended it meanwhile.
  const entry = await store.get(id);
  if (!entry?.journal || !isUnfinished(entry.response.status)) return;
  if (entry.journal.owner !== owner.name && (await ResponseOwner.alive()).has(entry.journal.owner)) return;
  const sent = await store.readEvents(id);
  const keep = (ended: ResponseObject) => void store.put({ response: ended, inputItems: entry.inputItems, history: [...entry.history, ...itemsToMessages(ended.output, "output")] });
  try {
    checkEventLog(id, sent);
  } catch (error) {
    // A damaged log is refused, never replayed: the response ends with the output its record holds, and says why.
    const { message } = ApiError.from(error);
    return keep(interruptedResponse(entry.response, entry.response.output, "stored_response_corrupt", message));
  }
  const stop = (code: string, message: string) => {
    const ended = interruptedResponse(entry.response, outputFromEvents(sent, entry.response.id), code, message);
    // A background response's log ends with the terminal event (a stream may reattach); a stream's log has no reader left.
    if (entry.response.background) void store.appendEvents(id, [{ type: "response.incomplete", sequence_number: nextSequenceAfter(sent), response: structuredCloneLite(ended) }]);
    keep(ended);
    if (!entry.response.background) void store.dropLog(id);
  };
  if (!entry.response.background) return stop("interrupted", "The stream's worker stopped (its page reloaded or closed) before the response was complete; it ends with the output sent before.");
  // Starting it over would make its MCP calls again (an approved one too), and its headers were never stored.
  if (usesMcp(entry.journal.body)) {
    return stop("resume_impossible", "The response could not resume after its worker stopped: it uses `mcp` tools, whose calls may have run already and whose headers are not stored. It ends with the output sent before; send the request again to continue.");
  }
  let request: ResponsesRequest;
  try {
    request = await runs.validate(entry.journal.body, entry.journal.client);
  } catch (error) {
    return stop("resume_impossible", `The response could not resume after its worker stopped: its request no longer validates (${(error as Error).message}).`);
  }
  if (!(await canResume(request.normalized.model).catch(() => false))) {
    return stop("model_not_cached", `The response could not resume after its worker stopped: its model ${request.normalized.model} is not in the cache (resuming never downloads).`);
  }
  // The stored request as it was: its input items keep their ids.
  request.inputItems = entry.inputItems;
  await runs.startBackground(request, { base: entry.response, sentBefore: sent, journaled: await store.readChunks(id) }).whenDone;
}
