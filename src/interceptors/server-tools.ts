import type { Tool } from "@modelcontextprotocol/client";
import { McplexError } from "../errors.js";
import { type CallRequest, type Interceptor, interceptor, type JsonObject } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";

/** The names of the two tools {@link serverTools} adds. */
export const CONNECT_SERVER = "connect_server";
export const DISCONNECT_SERVER = "disconnect_server";

/** How many of a server's recorded tools its line in the description names. */
const NAMED_TOOLS = 8;

/**
 * `connect_server` and `disconnect_server`: tools that start and stop the servers of the
 * config's `available:` map, so a model can bring in the tools it needs. An interceptor: it adds
 * the two to `tools/list` (only for a caller whose profile may connect at least one server) and
 * answers their calls; everything else passes by. A profile-bound caller may name only the
 * servers its profile could see; any other name is a tool error listing the names it may use.
 * The catalog change a connect or disconnect makes reaches clients as `list_changed`.
 *
 * @example
 * const gateway = new Gateway(hub);
 * if (config.serve?.serverTools === true) gateway.use(serverTools(hub));
 */
export function serverTools(hub: Hub): Interceptor {
  // It reads only `tools/list` results, which are never kept as text.
  return interceptor({ needs: "raw" }, (next) => async (request) => {
    const { method, params } = request;
    if (method === "tools/list") {
      const result = await next(request);
      const names = await hub.availableServers(request.context.profile);
      if (names.length === 0) return result;
      const tools = (result.tools as Tool[] | undefined) ?? [];
      return { ...result, tools: [...tools, ...(await describeTools(hub, request, names))] };
    }
    if (method !== "tools/call") return next(request);
    // A server tool of that very name (a server with prefix "") wins: it was configured by name.
    if (request.target?.kind === "tool" && request.target.tool !== undefined) return next(request);
    if (params.name === CONNECT_SERVER) return call(hub, request, "connect");
    if (params.name === DISCONNECT_SERVER) return call(hub, request, "disconnect");
    return next(request);
  });
}

async function describeTools(hub: Hub, request: CallRequest, names: string[]): Promise<Tool[]> {
  const profile = request.context.profile;
  const servers = await hub.availableTools(profile === undefined ? {} : { profile });
  const lines = servers.map((s) => {
    const named = s.tools.slice(0, NAMED_TOOLS).map((t) => t.name);
    const more = s.tools.length > NAMED_TOOLS ? `, … (${s.tools.length} tools)` : "";
    const tools = named.length === 0 ? "" : `: ${named.join(", ")}${more}`;
    return `- ${s.server}${s.connected ? " (connected)" : ""}${tools}`;
  });
  const schema = (what: string) => ({
    type: "object" as const,
    properties: { server: { type: "string", enum: names, description: `The server to ${what}.` } },
    required: ["server"],
    additionalProperties: false,
  });
  return [
    {
      name: CONNECT_SERVER,
      description:
        "Starts one of the MCP servers the user approved but that are not running, and adds its " +
        "tools to this tool list (the list changes; list the tools again to see them). " +
        `Servers that can be connected:\n${lines.join("\n")}`,
      inputSchema: schema("start"),
    },
    {
      name: DISCONNECT_SERVER,
      description: `Stops a server started with ${CONNECT_SERVER}; its tools leave this tool list. One of: ${names.join(", ")}.`,
      inputSchema: schema("stop"),
    },
  ];
}

async function call(hub: Hub, request: CallRequest, action: "connect" | "disconnect"): Promise<JsonObject> {
  const profile = request.context.profile;
  const options = profile === undefined ? {} : { profile };
  const args = (request.params.arguments ?? {}) as { server?: unknown };
  try {
    if (typeof args.server !== "string" || args.server === "") {
      const names = await hub.availableServers(profile);
      return toolError(`give "server", one of: ${names.join(", ") || "none"}`);
    }
    const server = args.server;
    if (action === "disconnect") {
      const stopped = await hub.disconnectServer(server, options);
      return text(stopped ? `disconnected "${server}"; its tools are gone` : `"${server}" was not connected`);
    }
    await hub.connectServer(server, options);
    const tools = hub
      .tools(profile)
      .filter((t) => t.server === server)
      .map((t) => t.name);
    return text(`connected "${server}": ${tools.length} tools: ${tools.join(", ")}`);
  } catch (error) {
    if (!(error instanceof McplexError)) throw error;
    // The hub's errors are already redacted; the model reads the first line and the fix.
    const first = error.message.split("\n")[0]!;
    return toolError(error.hint === undefined ? first : `${first} (${error.hint})`);
  }
}

function text(message: string): JsonObject {
  return { content: [{ type: "text", text: message }] };
}

function toolError(message: string): JsonObject {
  return { isError: true, content: [{ type: "text", text: message }] };
}
