import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogTool } from "../catalog/types.js";
import type { CatalogView } from "../catalog-modes/catalog-view.js";
import { META_TOOL } from "../catalog-modes/meta-tools.js";
import type { ModeCaller } from "../catalog-modes/view-resolver.js";
import { userRefOf } from "../credentials/user-ref.js";
import { RpcError } from "../errors.js";
import type { CallRequest, Handler, Interceptor, JsonObject, RequestContext } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import { ErrorCode } from "../protocol/error-codes.js";

/** The view a caller sees the catalog through; `undefined` for the whole catalog (`all` mode). */
export type ViewOf = (caller: ModeCaller) => CatalogView | undefined;

/**
 * The layer that serves `search` and `code` mode: `tools/list` answered from the caller's view,
 * the view's meta-tools answered by the view. Every call a meta-tool makes (`call_tool`, the
 * tools a `run_code` script calls) is a new `tools/call` request run from the top of the
 * pipeline, through the same layers as a direct call (profile, metrics, dashboard, tracing,
 * parking). Callers in `all` mode pass through untouched.
 */
export function catalogViews(
  hub: Hub,
  viewOf: ViewOf,
  request: (id: string, method: string, params: JsonObject, context: RequestContext) => CallRequest,
  run: Handler,
  available?: (profile: string | undefined) => Promise<readonly CatalogTool[]>,
): Interceptor {
  // Not async: a caller in `all` mode passes straight to `next`, with no promise of this layer's
  // own on its way (every call of a default `serve` comes this way).
  return interceptor({ needs: "raw" }, (next) => (req) => {
    if (req.row?.view !== true) return next(req);
    let view: CatalogView | undefined;
    try {
      view = viewOf(req.context);
    } catch (error) {
      return Promise.reject(error);
    }
    if (view === undefined) return next(req);
    return viewed(req, view, next);
  });

  // Views are for models: tools only an MCP App calls are not in them (its app calls them
  // directly, by `tools/call`, which passes the view by).
  async function viewed(req: CallRequest, view: CatalogView, next: Handler): Promise<JsonObject> {
    const profile = req.context.profile;
    const user = userRefOf(req.context.identity);
    // The caller's per-user servers list through the caller's own connections, opened first.
    const userTools = async () => {
      await hub.openUserServers(user, {
        signal: req.context.signal,
        ...(profile === undefined ? {} : { profile }),
      });
      return hub.modelTools(profile, user);
    };
    if (req.method === "tools/list") return { tools: view.listTools(await userTools()) };
    if (req.method === "resources/list") {
      const added = view.resources();
      const result = await next(req);
      if (added.length === 0) return result;
      return { ...result, resources: [...((result.resources as unknown[] | undefined) ?? []), ...added] };
    }
    if (req.method === "resources/read") {
      const uri = req.params.uri;
      const read =
        typeof uri === "string" ? await view.readResource(uri, hub.modelTools(profile, user)) : undefined;
      return read === undefined ? next(req) : (read as JsonObject);
    }
    const name = req.params.name;
    if (typeof name !== "string" || !view.handles(name)) return next(req);
    const args = req.params.arguments ?? {};
    if (typeof args !== "object" || args === null || Array.isArray(args))
      throw new RpcError(ErrorCode.InvalidParams, "Invalid params: arguments must be an object");
    let inner = 0;
    const result = await view.call(name, args as JsonObject, {
      tools: await userTools(),
      signal: req.context.signal,
      ...(req.context.caller === undefined ? {} : { caller: req.context.caller }),
      ...(available === undefined ? {} : { available: () => available(profile) }),
      // A tool only an MCP App calls is not the model's, here as in `tools`.
      findTool: async (tool, signal) => {
        const found = await hub.findTool(tool, {
          signal,
          ...(profile === undefined ? {} : { profile }),
          ...(user === undefined ? {} : { user }),
        });
        return found !== undefined && found.appOnly !== true;
      },
      callTool: async (tool, toolArgs, signal) => {
        const context = signal === req.context.signal ? req.context : { ...req.context, signal };
        // call_tool stands for the call itself: the client's progress token, input responses
        // and request state go with it. A script's calls are the script's own.
        const params: JsonObject =
          name === META_TOOL.call
            ? { ...req.params, name: tool, arguments: toolArgs }
            : { name: tool, arguments: toolArgs };
        return innerToolCall(run, request(`${req.id}/${++inner}`, "tools/call", params, context), tool);
      },
    });
    return result as JsonObject;
  }
}

/**
 * A `tools/call` a layer makes for its caller (a meta-tool's, a code-mode script's, a composite
 * tool's), run from the top of the pipeline: one call to that caller, so a task of its tool is
 * waited for; a wire error (an unknown name, a refusal) comes back as a tool error naming `tool`,
 * which a script or a model reads.
 */
export async function innerToolCall(run: Handler, call: CallRequest, tool: string): Promise<CallToolResult> {
  try {
    return (await run({ ...call, callOptions: { ...call.callOptions, tasks: "wait" } })) as CallToolResult;
  } catch (error) {
    if (error instanceof RpcError)
      return { isError: true, content: [{ type: "text", text: `${tool}: ${error.message}` }] };
    throw error;
  }
}
