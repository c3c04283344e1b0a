/**
 * What the worker answers on its port: calls of the API's own methods, and
 * nothing else comlink could do. comlink's `expose` serves its whole message
 * set on any path: GET reads any property (`constructor.constructor` is
 * `Function`), SET replaces one, CONSTRUCT runs `new` on any of them (a
 * same-origin script ran code in the worker that way) and ENDPOINT hands out a
 * second, unguarded port. A SharedWorker's port is open to every script of
 * the origin, so the worker refuses all of those: it accepts APPLY of a name
 * the exposed object has as its own property (one path element: no
 * `configure.call`, no `constructor`) and RELEASE (which only ends the
 * caller's own connection). The allowed names come from the exposed object,
 * so a method added to the worker API is allowed by being added there.
 */
import type * as Comlink from "comlink";
import { ApiError } from "../protocol/api-error.js";
import { serializeError } from "./transfer.js";

interface WireMessage {
  id?: unknown;
  type?: unknown;
  path?: unknown;
  argumentList?: unknown;
}

function isWireValue(value: unknown): boolean {
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return type === "RAW" || type === "HANDLER";
}

/** Why `message` is refused, or null when comlink may serve it. */
export function refusalOf(message: unknown, allowed: ReadonlySet<string>): string | null {
  if (typeof message !== "object" || message === null) return "it is not a comlink message";
  const { type, path, argumentList } = message as WireMessage;
  // comlink reads every message's arguments (RELEASE's too) outside its own try: a null one would throw in the worker.
  if (argumentList !== undefined && (!Array.isArray(argumentList) || !argumentList.every(isWireValue))) {
    return "its argumentList is not a list of comlink wire values ({ type: \"RAW\" | \"HANDLER\", ... })";
  }
  if (type === "RELEASE") return null;
  if (type !== "APPLY") return `the worker answers only calls of its API methods, not ${JSON.stringify(type)} messages`;
  if (!Array.isArray(path) || path.length !== 1 || typeof path[0] !== "string" || !allowed.has(path[0])) {
    return `${JSON.stringify(path)} is not a method of the worker API`;
  }
  return null;
}

/**
 * `endpoint` as comlink should see it: refused messages never reach its
 * listeners, and their sender gets a 400 through comlink's own error reply
 * (its call rejects instead of waiting forever).
 */
export function guardedEndpoint(endpoint: Comlink.Endpoint, api: object): Comlink.Endpoint {
  const allowed = new Set(Object.keys(api).filter((name) => typeof (api as Record<string, unknown>)[name] === "function"));
  const guards = new WeakMap<object, EventListener>();
  return {
    postMessage: (message: unknown, transfer?: Transferable[]) => endpoint.postMessage(message, transfer),
    addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: object) {
      const deliver = typeof listener === "function" ? listener : (event: Event) => listener.handleEvent(event);
      const guard = (event: Event) => {
        const data = (event as MessageEvent).data as WireMessage | null;
        let refusal = type === "message" ? refusalOf(data, allowed) : null;
        if (refusal === null) {
          try {
            return deliver(event);
          } catch (error) {
            // comlink reads the arguments before its own try: a handler value it has not got or cannot read throws here, not in its call.
            refusal = `its arguments could not be read (${error instanceof Error ? error.message : String(error)})`;
          }
        }
        if (data && (typeof data.id === "string" || typeof data.id === "number")) refuse(endpoint, data.id, refusal);
      };
      guards.set(listener, guard);
      endpoint.addEventListener(type, guard, options);
    },
    removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: object) {
      const guard = guards.get(listener);
      if (guard) endpoint.removeEventListener(type, guard, options);
    },
    start: endpoint.start ? () => endpoint.start?.() : undefined,
  };
}

/** comlink's reply for a thrown error, with the error transfer's fields (transfer.ts). */
function refuse(endpoint: Comlink.Endpoint, id: string | number, why: string): void {
  const error = new ApiError({ status: 400, code: "worker_call_refused", message: `The worker refused a message on its port: ${why}.` });
  endpoint.postMessage({ id, type: "HANDLER", name: "throw", value: { isError: true, value: serializeError(error) } });
}
