/**
 * The MCP view's server form: a URL and an optional header, "Connect" lists
 * the server's tools where the engine runs (the worker), and a failure is
 * shown as what it is:
 *
 *   await client.mcp.listTools({ server_url, headers });   // the tools, or why not
 *
 * A browser gives the same bare network error for a server that is down and
 * for one that does not allow this page's origin (CORS), and the library can
 * only name both. The page tells them apart with a `no-cors` probe: an opaque
 * answer means something answered, so the server is up and CORS is missing.
 */
import type { Client, McpToolInfo } from "../../src/index.js";
import { h, replace } from "./dom.js";

/** A server the view is connected to: what every request's `mcp` tool carries. */
export interface McpServer {
  url: string;
  label: string;
  headers: Record<string, string>;
  tools: McpToolInfo[];
}

export interface McpServerForm {
  element: HTMLElement;
}

export function createMcpServerForm(client: Client, onConnected: (server: McpServer) => void): McpServerForm {
  const url = h("input", { type: "url", id: "mcp-url", placeholder: "https://example.com/mcp", size: 40, "aria-label": "MCP server URL" });
  const headerName = h("input", { type: "text", id: "mcp-header-name", placeholder: "X-Api-Key (optional)", size: 16, "aria-label": "Header name" });
  const headerValue = h("input", { type: "password", id: "mcp-header-value", placeholder: "value", size: 16, "aria-label": "Header value", autocomplete: "off" });
  const connect = h("button", { id: "mcp-connect", type: "submit", class: "primary" }, "Connect");
  const status = h("div", { id: "mcp-status", class: "progress-text", role: "status" }, "Not connected.");
  const failure = h("div", { id: "mcp-error", class: "error", role: "alert", hidden: true });
  const tools = h("ul", { id: "mcp-tools", class: "mcp-tools" });

  const form = h(
    "form",
    { class: "mcp-server" },
    h("label", { class: "field" }, h("span", {}, "Server URL (Streamable HTTP or HTTP+SSE)"), url),
    h("div", { class: "mcp-header" }, h("label", { class: "field" }, h("span", {}, "Header"), headerName), h("label", { class: "field" }, h("span", {}, "Value"), headerValue)),
    h("div", { class: "actions" }, connect),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const serverUrl = url.value.trim();
    const name = headerName.value.trim();
    // Sent to the connection only: never stored or returned (docs/mcp.md#security).
    const headers: Record<string, string> = name ? { [name]: headerValue.value } : {};
    connect.disabled = true;
    failure.hidden = true;
    replace(failure);
    replace(tools);
    replace(status, `Connecting to ${serverUrl || "…"}…`);
    delete status.dataset.state;
    try {
      const listing = await client.mcp.listTools({ server_url: serverUrl, headers });
      // Resolved as the library resolves it: a path is relative to the page's origin.
      const resolved = new URL(serverUrl, `${location.origin}/`);
      const server = { url: resolved.href, label: labelFor(resolved), headers, tools: listing };
      replace(tools, ...listing.map(toolEntry));
      replace(status, `Connected to ${server.url}: ${listing.length} tool${listing.length === 1 ? "" : "s"}.`);
      status.dataset.state = "connected";
      onConnected(server);
    } catch (error) {
      // Explained first (it may probe the server), then shown, and the state set last: "error" means
      // the message is this attempt's, not the previous one's still on screen.
      const explanation = await explain(serverUrl, error);
      replace(status, "Not connected.");
      replace(failure, ...explanation);
      failure.hidden = false;
      status.dataset.state = "error";
    } finally {
      connect.disabled = false;
    }
  });

  return { element: h("div", {}, form, status, failure, tools) };
}

/** `add(a, b)`, and the description. */
function toolEntry(tool: McpToolInfo): HTMLElement {
  const properties = Object.keys((tool.input_schema.properties as Record<string, unknown> | undefined) ?? {});
  return h("li", { dataset: { tool: tool.name } }, h("code", {}, `${tool.name}(${properties.join(", ")})`), tool.description ? ` ${tool.description}` : "");
}

/** The `server_label` the hosted API requires (1–64 of a-z, A-Z, 0-9, _ and -): the server's host. */
function labelFor(url: URL): string {
  return url.hostname.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "mcp";
}

/** A headline that says which failure it is, then the library's own message (what to fix). */
async function explain(serverUrl: string, error: unknown): Promise<Array<HTMLElement | string>> {
  const message = error instanceof Error ? error.message : String(error);
  const detail = h("small", { class: "mcp-error-detail" }, message);
  const code = (error as { code?: unknown }).code;
  if (code === "invalid_url" || code === "missing_required_parameter") return [h("strong", {}, "Bad URL. "), detail];
  if (!/Could not reach/.test(message)) return [h("strong", {}, "The server refused or failed. "), detail];
  if (await answers(serverUrl)) {
    return [h("strong", {}, "No CORS: "), `the server at ${serverUrl} answered, but it does not allow this page's origin (${location.origin}). It must send Access-Control-Allow-Origin and expose Mcp-Session-Id (docs/mcp.md#cors). `, detail];
  }
  return [h("strong", {}, "Unreachable: "), `nothing answered at ${serverUrl}. Is the server running, and is the URL right? `, detail];
}

/** Whether anything answers at `url`: an opaque `no-cors` response resolves; a refused connection rejects. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { mode: "no-cors", signal: AbortSignal.timeout(5000) });
    return true;
  } catch {
    return false;
  }
}
