/// <reference lib="webworker" />
/**
 * The bare baseline: on `{ count }`, post the benchmark's tokens to the page
 * one postMessage each — what any per-token worker protocol costs at least.
 */
import { benchTokens } from "./tokens.js";

self.onmessage = (event: MessageEvent<{ count: number }>) => {
  for (const token of benchTokens(event.data.count)) self.postMessage(token);
  self.postMessage(null);
};
