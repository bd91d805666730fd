// The request object of the pipeline (`CallRequest`) as a gateway makes it from a wire request:
// its context (a 2026 request's, from its envelope), its target (what it names, looked up in the
// catalog) and the options its hub call carries.
import type { Catalog } from "../catalog/catalog.js";
import { userRefOf } from "../credentials/user-ref.js";
import type { RequestContext, RequestTarget } from "../hub/call-pipeline.js";
import type { CallOptions } from "../hub/hub-types.js";
import { sessionHandler } from "../interceptors/client-input.js";
import { type MethodRow, targetParamOf } from "../protocol/method-table.js";
import type { Envelope } from "../protocol/rev2026.js";
import { declaresTasks } from "../protocol/tasks.js";

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
      if (typeof ref?.uri === "string") return templateTarget(catalog, ref.uri, profile);
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

function templateTarget(catalog: Catalog, uri: string, profile: string | undefined): RequestTarget {
  const template = catalog.resolveResourceTemplate(uri, profile);
  return template === undefined
    ? { kind: "resource", uri }
    : { kind: "resource", uri, server: template.server, template };
}

/**
 * The context of a 2026 request, from its envelope (read with `readEnvelope`) and what the
 * front knows: the one place every front sets up a stateless request.
 */
export function statelessContext(
  envelope: Envelope,
  front: Pick<
    RequestContext,
    "signal" | "notify" | "profile" | "mode" | "caller" | "identity" | "client" | "headers" | "front"
  >,
): RequestContext {
  // Built whole, every member present (`undefined` where unknown), in one order: every
  // request's context then has one shape, rather than one per set of members it happens to have.
  return {
    stateless: true,
    protocolVersion: envelope.protocolVersion,
    clientCapabilities: envelope.clientCapabilities,
    signal: front.signal,
    notify: front.notify,
    profile: front.profile,
    mode: front.mode,
    caller: front.caller,
    identity: front.identity,
    client: front.client,
    headers: front.headers,
    front: front.front,
    clientInfo: envelope.clientInfo,
    logLevel: envelope.logLevel,
  };
}

/**
 * What a forwarded request's hub call carries from its client: signal, capabilities, log level,
 * profile, session, the progress relay, and for a 2025 session the handler that sends server
 * requests to its client; `rawResult` when its front relays the result as it comes. Built with
 * every key, in one order: the hub reads these options on every call, and objects of one shape
 * keep those reads fast.
 */
export function callOptionsOf(
  ctx: RequestContext,
  params: Record<string, unknown>,
  rawResult = false,
): CallOptions {
  const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
  const stateless = ctx.stateless;
  return {
    signal: ctx.signal,
    timeout: undefined,
    onProgress:
      token === undefined
        ? undefined
        : (p) => ctx.notify("notifications/progress", { ...p, progressToken: token }),
    profile: ctx.profile,
    onServerRequest: stateless ? undefined : sessionHandler(ctx),
    // A 2025-11-25 client's experimental task request goes to its server as it came.
    params: stateless || params.task === undefined ? undefined : { task: params.task },
    returnInputRequired: undefined,
    // A 2026 client takes a task itself when it declared the extension; a 2025 client's call waits.
    tasks: stateless ? (declaresTasks(ctx.clientCapabilities) ? "return" : "decline") : undefined,
    clientCapabilities: ctx.clientCapabilities,
    // A 2025 client that set no level gets every log message; a 2026 client only what it asked for.
    logLevel: ctx.stateless ? ctx.logLevel : (ctx.logLevel ?? "debug"),
    client: ctx.client,
    // Only a signed-in (OAuth) caller is a user: no look-up for the others.
    user: ctx.identity?.via === "oauth" ? userRefOf(ctx.identity) : undefined,
    rawResult,
  };
}
