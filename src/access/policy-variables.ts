import type { PolicyVariables } from "../config/policy-expressions.js";
import type { CallRequest, RequestContext } from "../hub/call-pipeline.js";
import { type ResolvedNames, resolvedNames } from "./resolved-names.js";

/** An empty map, for what a request does not have (no arguments, no result yet). */
const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * What a policy rule sees of a request's caller: who (the issuer and subject of a sign-in, else
 * how they came in), what their sign-in says (claims, groups, scopes, email), and the profile,
 * operator rights and front they came through. Every member is present, empty where unknown, so
 * a rule reads `caller.subject == ""` rather than failing on a missing key.
 */
export function callerVariables(
  context: Partial<Pick<RequestContext, "identity" | "profile" | "front">>,
): Record<string, unknown> {
  const identity = context.identity;
  return {
    issuer: identity?.issuer ?? "",
    subject: identity?.subject ?? "",
    client: identity?.client ?? "",
    // `oauth` (signed in), `token` (a static token), `anonymous` (a front without tokens), or
    // `local` (the library, `mcplex call` and `chat`: this machine's user).
    via: identity?.via ?? "local",
    email: identity?.email ?? "",
    emailVerified: identity?.emailVerified === true,
    groups: identity?.groups ?? [],
    scopes: identity?.scopes ?? [],
    claims: identity?.claims ?? NONE,
    profile: context.profile ?? "",
    // A caller without an identity is this machine's user, who runs the config.
    operator: identity === undefined ? true : identity.operator,
    front: context.front ?? "local",
  };
}

/**
 * What a policy rule sees of the request itself, as the catalog resolved it (never only the alias
 * a client used): the method, the server, the tool's, prompt's or resource's exposed name (`""`
 * when the request names none), the arguments, and a tool's annotations as its server declared
 * them.
 */
export function requestVariables(
  request: CallRequest,
  names: ResolvedNames | undefined = request.target === undefined ? undefined : resolvedNames(request.target),
): Record<string, unknown> {
  const { method, params, target } = request;
  const tool = target?.kind === "tool" ? target.tool : undefined;
  const args = params.arguments;
  return {
    method,
    server: names?.server ?? "",
    tool: names?.tool ?? "",
    prompt: names?.prompt ?? "",
    resource: target?.kind === "resource" ? target.uri : "",
    arguments: typeof args === "object" && args !== null && !Array.isArray(args) ? args : NONE,
    annotations: (tool?.tool.annotations as Record<string, unknown> | undefined) ?? NONE,
  };
}

/** The variables of a request, `response` empty until there is one. */
export function policyVariables(
  request: CallRequest,
  response: Record<string, unknown> = NONE,
  names?: ResolvedNames,
): PolicyVariables {
  return {
    caller: callerVariables(request.context),
    request: requestVariables(request, names),
    response,
    now: new Date(),
  };
}
