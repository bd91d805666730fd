import type { Catalog } from "../catalog/catalog.js";
import type { RequestContext, RequestTarget } from "../hub/call-pipeline.js";
import { type MethodRow, targetParamOf } from "../protocol/method-table.js";

/** Opens the task handles a `task` row names (the gateway's tasks: see `GatewayTasks`). */
export interface TaskTargets {
  target(value: unknown, context: RequestContext): RequestTarget | undefined;
}

/**
 * What a request names, looked up in its caller's view of the catalog as its method's row says:
 * the one lookup of a request's path (the route, the observers and the fronts' header checks
 * all use it). `undefined` for requests that name nothing; a target without `server` when the
 * name is unknown (a tool whose server is still starting is looked up again when it is ready),
 * or when a task handle names no task this caller may reach.
 */
export function resolveTarget(
  catalog: Catalog,
  row: MethodRow | undefined,
  params: Record<string, unknown>,
  context: RequestContext,
  tasks?: TaskTargets,
): RequestTarget | undefined {
  if (row === undefined) return undefined;
  const param = targetParamOf(row);
  if (param === undefined) return undefined;
  const value = params[param];
  const profile = context.profile;
  switch (row.target) {
    case "tool":
      return typeof value === "string" ? toolTarget(catalog, value, profile) : undefined;
    case "prompt":
      return typeof value === "string" ? promptTarget(catalog, value, profile) : undefined;
    case "resource":
      return typeof value === "string" ? resourceTarget(catalog, value, profile) : undefined;
    case "server": {
      if (typeof value !== "string") return undefined;
      const known = catalog.servers().includes(value) && catalog.reaches(value, profile);
      return known ? { kind: "server", name: value, server: value } : { kind: "server", name: value };
    }
    case "completion": {
      const ref = value as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === "ref/prompt" && typeof ref.name === "string")
        return promptTarget(catalog, ref.name, profile);
      if (typeof ref?.uri === "string") return resourceTarget(catalog, ref.uri, profile);
      return undefined;
    }
    case "task":
      return tasks?.target(value, context);
    default:
      return undefined;
  }
}

function toolTarget(catalog: Catalog, name: string, profile: string | undefined): RequestTarget {
  // An MCP App calls its server's tools by their own names: one no exposed name has, that one
  // app server's tool has, goes there.
  const tool = catalog.resolveTool(name, profile) ?? catalog.resolveAppTool(name, profile);
  return tool === undefined ? { kind: "tool", name } : { kind: "tool", name, server: tool.server, tool };
}

function promptTarget(catalog: Catalog, name: string, profile: string | undefined): RequestTarget {
  const prompt = catalog.resolvePrompt(name, profile);
  return prompt === undefined
    ? { kind: "prompt", name }
    : { kind: "prompt", name, server: prompt.server, prompt };
}

function resourceTarget(catalog: Catalog, uri: string, profile: string | undefined): RequestTarget {
  const resource = catalog.resolveResource(uri, profile);
  return resource === undefined
    ? { kind: "resource", uri }
    : { kind: "resource", uri, server: resource.server, resource };
}
