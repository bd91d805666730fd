import { listedTool } from "../../catalog/tool-overrides.js";
import { userRefOf } from "../../credentials/user-ref.js";
import { RpcError } from "../../errors.js";
import { rendersApps } from "../../ext/apps/apps-extension.js";
import type { JsonObject } from "../../hub/call-pipeline.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { type MethodHandlers, requireString } from "./method-handler.js";
import { toolError } from "./tool-error.js";

/**
 * `tools/list`, and the `tools/call` the route does not take itself (its fast path takes a
 * well-formed call of a known tool): arguments checked, a tool of a per-user server looked up
 * again, failures the model should read made `isError` results, a task given a handle.
 */
export const TOOL_METHODS: MethodHandlers = {
  "tools/list": async (request, { hub }) => {
    const profile = request.context.profile;
    // The caller's own per-user servers list through their own connections, opened now.
    const user = userRefOf(request.context.identity);
    await hub.openUserServers(user, {
      signal: request.context.signal,
      ...(profile === undefined ? {} : { profile }),
    });
    // Tools only an MCP App calls go to clients that render apps, never to a model's.
    return {
      // With the caller's own per-user servers' tools: a per-user server lists per user.
      tools: (rendersApps(request.context.clientCapabilities)
        ? hub.tools(profile, user)
        : hub.modelTools(profile, user)
      ).map(listedTool),
    };
  },
  "tools/call": async (request, { hub, tasks, dispatch }) => {
    const { params, target, callOptions } = request;
    const profile = request.context.profile;
    const name = requireString(params, "name");
    const args = params.arguments ?? {};
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new RpcError(ErrorCode.InvalidParams, "Invalid params: arguments must be an object");
    }
    let tool = target?.kind === "tool" ? target.tool : undefined;
    let sent = request;
    if (tool === undefined && target?.kind === "tool" && target.unreachable !== undefined) {
      // Its per-user server could not open the caller's connection when the call came in
      // (connect first, say). Looked up again: a layer may be calling again once it can.
      try {
        tool = await hub.findTool(name, {
          signal: callOptions.signal,
          ...(profile === undefined ? {} : { profile }),
          ...(callOptions.user === undefined ? {} : { user: callOptions.user }),
        });
      } catch (error) {
        return toolError(error);
      }
      if (tool !== undefined) sent = { ...request, target: { ...target, server: tool.server, tool } };
    }
    if (tool === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { name });
    let result: JsonObject;
    try {
      result = await dispatch(sent);
    } catch (error) {
      return toolError(error);
    }
    // A task (2026 `resultType: "task"`, 2025-11-25 `{ task }`) goes out with a handle for its id.
    return result.resultType === "task" || result.task !== undefined ? tasks.created(sent, result) : result;
  },
};
