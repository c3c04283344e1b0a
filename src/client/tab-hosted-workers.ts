/**
 * A tab's side of the Workers it starts for the shared worker. Chromium gives
 * a SharedWorker no Worker constructor, so a GGUF engine there asks a
 * connected tab to start llama.cpp's Worker (engine/wllama/wllama-tab-host.ts
 * is the other side): the tab makes a URL of its own for the script (a blob:
 * URL made in the shared worker is that worker's), starts the Worker, and
 * relays its messages both ways over the MessagePort it was given, transfers
 * included towards the Worker (the GGUF's bytes are moved, not copied).
 *
 * The Worker lives as long as this tab's client: closing the tab, or
 * `client.terminate()`, ends it, and the shared worker learns of it from the
 * tab's Web Lock, or its goodbye where Web Locks are missing (worker/shared-host.ts).
 */
import type { HostedWorkerCommand, HostedWorkerReport } from "../engine/wllama/wllama-tab-host.js";

export interface TabHostedWorkers {
  /** Starts a Worker of `type` from `script`, its messages relayed over `port`; throws where this page cannot start it. */
  start(script: Blob, port: MessagePort, type: WorkerType): void;
  /** Ends every Worker this tab started (its client is terminated). */
  endAll(): void;
}

export function tabHostedWorkers(): TabHostedWorkers {
  const running = new Set<() => void>();
  return {
    start(script, port, type) {
      const url = URL.createObjectURL(script);
      let worker: Worker;
      try {
        worker = new Worker(url, { type });
      } catch (error) {
        URL.revokeObjectURL(url);
        port.close();
        throw error;
      }
      const end = () => {
        running.delete(end);
        worker.terminate();
        port.close();
        URL.revokeObjectURL(url);
      };
      running.add(end);
      const report = (message: HostedWorkerReport) => port.postMessage(message);
      // What the Worker posts goes on as a copy (its answers are small: tokens, results).
      worker.onmessage = (event) => report({ type: "message", data: event.data });
      worker.onerror = (event) => {
        event.preventDefault();
        report({ type: "error", message: event.message || "the Worker failed to start or threw" });
      };
      port.onmessage = (event: MessageEvent<HostedWorkerCommand>) => {
        const command = event.data;
        if (command.type === "post") worker.postMessage(command.data, command.transfer);
        else end();
      };
    },
    endAll() {
      for (const end of [...running]) end();
    },
  };
}
