/**
 * `server_url` as the connection takes it: `https:` or `http:`, or a path
 * relative to the page's origin (resolved against `location.origin` where the
 * engine runs: a worker has its page's origin). Anything else is a 400 naming
 * the tool.
 */
import { invalidParam } from "./api-error.js";

export function resolveServerUrl(raw: string, param: string): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  let url: URL;
  try {
    url = /^[a-z][a-z0-9+.-]*:/i.test(raw) || !origin || origin === "null" ? new URL(raw) : new URL(raw, `${origin}/`);
  } catch {
    const why = origin ? "" : " (a relative URL needs a page origin; none is known here)";
    throw invalidParam(param, `\`${param}\` must be an https: or http: URL, or a path relative to the page's origin${why}, got ${JSON.stringify(raw.slice(0, 200))}.`, "invalid_url");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalidParam(param, `\`${param}\` must be an https: or http: URL (an MCP server over Streamable HTTP or HTTP+SSE), got the ${url.protocol} scheme.`, "invalid_url");
  }
  return url.href;
}
