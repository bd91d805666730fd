import type { Tool } from "@modelcontextprotocol/client";
import type { Catalog } from "../catalog/catalog.js";
import { userRefOf } from "../credentials/user-ref.js";
import { McplexError, NotFoundError, RpcError } from "../errors.js";
import type { CallRequest, Handler, JsonObject } from "../hub/call-pipeline.js";
import { targetName } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import { setToolErrorCause } from "../hub/tool-error-cause.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { declaredExtension, SKILLS_EXTENSION, UI_EXTENSION } from "../protocol/extensions.js";
import { REV2026_PROTOCOL_VERSIONS } from "../protocol/rev2026.js";
import { TASKS_EXTENSION } from "../protocol/tasks.js";
import type { GatewayTasks } from "./tasks/gateway-tasks.js";

/** What the gateway says about itself. */
export interface GatewayIdentity {
  name: string;
  version: string;
  instructions?: string;
}

/**
 * The capabilities the gateway serves: the core ones are fixed (the catalog may change; they do
 * not), the extensions are those its servers declare (see {@link servedExtensions}).
 */
export function serverCapabilities(
  stateless: boolean,
  extensions?: Record<string, unknown>,
): Record<string, unknown> {
  const capabilities: Record<string, unknown> = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
  };
  if (!stateless) capabilities.logging = {};
  if (extensions !== undefined) capabilities.extensions = extensions;
  return capabilities;
}

/**
 * The extensions the gateway declares, from those of the servers `profile` reaches: skills
 * when one of them serves skills (with `directoryRead` only when every one of them reads
 * directories, since `resources/directory/read` may go to any), and MCP Apps with the first
 * declaring server's settings. `undefined` when none declares either.
 */
export function servedExtensions(catalog: Catalog, profile?: string): Record<string, unknown> | undefined {
  const served: Record<string, unknown> = {};
  const skills = catalog.extensionServers(SKILLS_EXTENSION, profile);
  if (skills.length > 0)
    served[SKILLS_EXTENSION] = skills.every((s) => s.settings.directoryRead === true)
      ? { directoryRead: true }
      : {};
  const apps = catalog.extensionServers(UI_EXTENSION, profile);
  if (apps.length > 0) served[UI_EXTENSION] = apps[0]!.settings;
  return Object.keys(served).length === 0 ? undefined : served;
}

/**
 * The end of the pipeline: the gateway's method table. Answers from the hub's catalog, with
 * the target the request resolved to; names and URIs are mapped both ways by the hub, task ids
 * to and from handles by `tasks`.
 */
export function route(hub: Hub, identity: GatewayIdentity, tasks: GatewayTasks, dispatch: Handler): Handler {
  const answer = table(hub, identity, tasks, dispatch);
  // Not async: a well-formed call of a known tool hands on the hub's promise with one `then`,
  // not an async function's promise and await around it. Anything else takes the table's way.
  return (request) => {
    if (request.method !== "tools/call") return answer(request);
    const { params, target } = request;
    const args = params.arguments;
    if (
      target?.kind !== "tool" ||
      target.tool === undefined ||
      typeof params.name !== "string" ||
      params.name === "" ||
      (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args)))
    )
      return answer(request);
    return dispatch(request).then(
      (result) =>
        result.resultType === "task" || result.task !== undefined ? tasks.created(request, result) : result,
      toolError,
    );
  };
}

/** The method table: every method, and the tool calls {@link route} does not take itself. */
function table(hub: Hub, identity: GatewayIdentity, tasks: GatewayTasks, dispatch: Handler): Handler {
  return async (request) => {
    const { method, params, target, callOptions } = request;
    const profile = request.context.profile;
    switch (method) {
      case "ping":
        return {};
      case "server/discover": {
        const capabilities = serverCapabilities(true, servedExtensions(hub.catalog, profile));
        // Declared while a server the caller reaches may create tasks: the gateway carries them.
        if (tasks.extended(profile))
          capabilities.extensions = {
            ...(capabilities.extensions as Record<string, unknown> | undefined),
            [TASKS_EXTENSION]: {},
          };
        const result: JsonObject = { supportedVersions: [...REV2026_PROTOCOL_VERSIONS], capabilities };
        if (identity.instructions !== undefined) result.instructions = identity.instructions;
        return result;
      }
      case "tools/list": {
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
          ).map(
            (t): Tool =>
              t.meta !== undefined
                ? { ...t.tool, name: t.name, _meta: t.meta }
                : t.name === t.tool.name
                  ? t.tool
                  : { ...t.tool, name: t.name },
          ),
        };
      }
      case "prompts/list":
        return {
          prompts: hub
            .prompts(profile)
            .map((p) => (p.name === p.prompt.name ? p.prompt : { ...p.prompt, name: p.name })),
        };
      case "resources/list":
        return {
          resources: hub
            .resources(profile)
            .map((r) => (r.uri === r.resource.uri ? r.resource : { ...r.resource, uri: r.uri })),
        };
      case "skills/list": {
        const cursor = params.cursor;
        if (cursor !== undefined && typeof cursor !== "string")
          throw new RpcError(ErrorCode.InvalidParams, "Invalid params: cursor must be a string");
        const page = await hub.listSkills({
          signal: callOptions.signal,
          ...(profile === undefined ? {} : { profile }),
          ...(cursor === undefined ? {} : { cursor }),
        });
        return page.nextCursor === undefined
          ? { skills: page.skills }
          : { skills: page.skills, nextCursor: page.nextCursor };
      }
      case "resources/templates/list":
        return {
          resourceTemplates: hub
            .resourceTemplates(profile)
            .map((t) =>
              t.uriTemplate === t.resourceTemplate.uriTemplate
                ? t.resourceTemplate
                : { ...t.resourceTemplate, uriTemplate: t.uriTemplate },
            ),
        };
      case "tools/call": {
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
        if (tool === undefined)
          throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { name });
        let result: JsonObject;
        try {
          result = await dispatch(sent);
        } catch (error) {
          return toolError(error);
        }
        // A task (2026 `resultType: "task"`, 2025-11-25 `{ task }`) goes out with a handle for its id.
        return result.resultType === "task" || result.task !== undefined
          ? tasks.created(sent, result)
          : result;
      }
      case "prompts/get": {
        const name = requireString(params, "name");
        const prompt = target?.kind === "prompt" ? target.prompt : undefined;
        if (prompt === undefined)
          throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`, { name });
        return await dispatch(request);
      }
      case "resources/read": {
        const uri = requireString(params, "uri");
        const resource = target?.kind === "resource" ? target.resource : undefined;
        if (resource === undefined)
          throw new RpcError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
        return await dispatch(request);
      }
      case "completion/complete": {
        const ref = params.ref as { type?: string; name?: string; uri?: string } | undefined;
        const argument = params.argument as { name: string; value: string } | undefined;
        if (ref === undefined || argument === undefined) {
          throw new RpcError(
            ErrorCode.InvalidParams,
            "Invalid params: completion/complete needs ref and argument",
          );
        }
        return await dispatch(request);
      }
      case "resources/subscribe":
        await hub.subscribeResource(requireString(params, "uri"), {
          signal: callOptions.signal,
          ...(profile === undefined ? {} : { profile }),
        });
        return {};
      case "resources/unsubscribe":
        await hub.unsubscribeResource(requireString(params, "uri"), profile === undefined ? {} : { profile });
        return {};
      case "tasks/list":
        return await tasks.list(request);
      default:
        if (request.row?.target === "task") return await tasks.route(request, dispatch);
        if (request.row?.forwarded === true) return await forward(dispatch, request);
        throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
  };
}

/**
 * A forwarded method the route has no case of its own for (a row added to the method table):
 * sent to the server its target names, with the name or URI the client used mapped to the
 * server's own. Failures stay wire errors (the fronts map typed errors): only tools answer
 * with `isError`.
 */
async function forward(dispatch: Handler, request: CallRequest): Promise<JsonObject> {
  const { method, target, row } = request;
  if (target?.server === undefined) {
    const what = target === undefined ? `params.${row?.targetParam ?? "name"}` : targetName(target);
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${method} names no known target (${what})`);
  }
  return await dispatch(request);
}

/** Whether a client declared the MCP Apps extension (it renders `ui://` apps). */
function rendersApps(capabilities: Record<string, unknown>): boolean {
  return declaredExtension(capabilities, UI_EXTENSION) !== undefined;
}

function requireString(params: JsonObject, key: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "")
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${key} must be a non-empty string`);
  return value;
}

/**
 * Failures of a tool call that the model should read (server down, timeout) become tool
 * results with `isError`; errors the server answered pass through as wire errors.
 */
function toolError(error: unknown): JsonObject {
  if (error instanceof RpcError) throw error;
  if (error instanceof NotFoundError) throw new RpcError(ErrorCode.InvalidParams, error.message);
  if (error instanceof McplexError) {
    const result = { isError: true, content: [{ type: "text", text: error.message.split("\n")[0] }] };
    setToolErrorCause(result, error);
    return result;
  }
  throw error;
}
