// A small MCP client for the page: each request is one stateless 2026-07-28 POST to the
// gateway's own /mcp, so the page's calls go through the same pipeline as any client's
// (profiles, metrics, the call feed). Progress and log messages come back on the POST's
// event stream; aborting the request (closing the stream) is the cancellation, which the
// gateway passes on to the server (as notifications/cancelled to a 2025 server).

const VERSION = "2026-07-28";
const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
};
const APP_MIME = "text/html;profile=mcp-app";
/** Methods whose request names a tool, prompt or resource in the Mcp-Name header. */
const NAMED_BY = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

/** A JSON-RPC error answered by the gateway (or an HTTP refusal, with the gateway's message). */
export class McpError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = "McpError";
    this.code = code;
    this.data = data;
  }
}

/** An HTTP header value: as-is when plain visible ASCII, else `=?base64?...?=` of its UTF-8. */
export function encodeHeaderValue(value) {
  const plain =
    /^[\x20-\x7e]*$/.test(value) &&
    value === value.trim() &&
    !(value.startsWith("=?base64?") && value.endsWith("?="));
  if (plain) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

/**
 * The `Mcp-Param-*` headers of a tools/call: the arguments the tool's input schema marks with
 * `x-mcp-header` (on properties reachable from the root), mirrored into headers.
 */
export function paramHeaders(inputSchema, args) {
  const out = {};
  const visit = (schema, value) => {
    if (typeof schema !== "object" || schema === null) return;
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      const v = typeof value === "object" && value !== null ? value[key] : undefined;
      const name = child?.["x-mcp-header"];
      if (typeof name === "string" && name !== "") {
        const text =
          typeof v === "string"
            ? v
            : typeof v === "boolean" || (typeof v === "number" && Number.isSafeInteger(v))
              ? String(v)
              : undefined;
        if (text !== undefined) out[`Mcp-Param-${name}`] = encodeHeaderValue(text);
      }
      visit(child, v);
    }
  };
  visit(inputSchema, args);
  return out;
}

/** The JSON messages of a `text/event-stream` body, one at a time as they arrive. */
async function* sseMessages(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n/g, "\n");
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        buffer = buffer.slice(end + 2);
        if (data !== "") yield JSON.parse(data);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * An MCP client of one gateway endpoint.
 *
 * @example
 * const client = new McpClient({ headers: authHeaders });
 * const { tools } = await client.request("tools/list");
 * const result = await client.request("tools/call", { name: "fx__echo", arguments: { message: "hi" } },
 *   { signal: abort.signal, onProgress: (p) => console.log(p.progress, p.total) });
 */
export class McpClient {
  #endpoint;
  #headers;
  #next = 1;

  /** `headers` is called for every request (the token may change). */
  constructor({ endpoint = "/mcp", headers = () => ({}) } = {}) {
    this.#endpoint = endpoint;
    this.#headers = headers;
  }

  /**
   * Sends one request and resolves with its result; rejects with an {@link McpError}, or an
   * AbortError when `signal` aborts (which cancels the request upstream).
   * `onProgress` receives each notifications/progress's params; `extraHeaders` adds headers
   * (the `Mcp-Param-*` of a tool call).
   */
  async request(method, params = {}, { signal, onProgress, onNotification, extraHeaders = {} } = {}) {
    const id = this.#next++;
    const meta = {
      ...params._meta,
      [META.protocolVersion]: VERSION,
      [META.clientInfo]: { name: "mcplex-dashboard", version: "1.0.0" },
      // The page renders MCP Apps (the playground), so it sees the tools only an app calls too.
      [META.clientCapabilities]: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [APP_MIME] } } },
      ...(onProgress === undefined ? {} : { progressToken: `dashboard-${id}` }),
    };
    const message = { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } };
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...this.#headers(),
      ...extraHeaders,
    };
    const named = NAMED_BY[method];
    if (named !== undefined && typeof params[named] === "string")
      headers["mcp-name"] = encodeHeaderValue(params[named]);
    const response = await fetch(this.#endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
      signal,
      cache: "no-store",
      // The token goes in a header; cookies (another site's on this host, say) never go along.
      credentials: "omit",
    });
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && response.body !== null) {
      for await (const m of sseMessages(response.body)) {
        if (m.id === id) return answer(m);
        if (m.method === "notifications/progress") onProgress?.(m.params);
        else if (m.method !== undefined) onNotification?.(m);
      }
      throw new McpError(-32000, `the gateway ended the stream without answering ${method}`);
    }
    const body = await response.json().catch(() => undefined);
    if (body === undefined)
      throw new McpError(-32000, `the gateway answered ${response.status} to ${method}`);
    if (body.jsonrpc === undefined && typeof body.error === "string") throw new McpError(-32000, body.error);
    return answer(body);
  }

  /** Every item of a paginated list (`tools/list` → `tools`), following cursors. */
  async listAll(method, key, options = {}) {
    const items = [];
    let cursor;
    do {
      const page = await this.request(method, cursor === undefined ? {} : { cursor }, options);
      items.push(...(page[key] ?? []));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return items;
  }
}

function answer(message) {
  if (message.error !== undefined)
    throw new McpError(message.error.code, message.error.message, message.error.data);
  return message.result;
}
