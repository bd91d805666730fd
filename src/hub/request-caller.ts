import type { Identity, RequestContext } from "./call-pipeline.js";

/** Who made a request, as the audit trail and the dashboard name them. */
export interface RequestCaller {
  /**
   * The signed-in user (`identity.subject`), else the identity's key (`token#0`, never the
   * token; the client's address when no credential is asked), else the front (`stdio`), else
   * `library` (a gateway driven in code).
   */
  subject: string;
  /** How the identity was established; `none` without one (stdio, library). */
  via: Identity["via"] | "none";
  /** The issuer that vouched for the subject, for signed-in users. */
  issuer?: string;
  /**
   * The client it came through: the OAuth client the user signed in with, else the MCP client's
   * own name for itself (`clientInfo.name`), where known.
   */
  client?: string;
}

/**
 * The {@link RequestCaller} of a request's context: what the front's authenticator decided, with
 * the front and the client's own name where there is no identity.
 *
 * @example
 * requestCaller(request.context); // { subject: "alice", via: "oauth", client: "claude-code" }
 */
export function requestCaller(context: RequestContext): RequestCaller {
  const { identity } = context;
  const caller: RequestCaller =
    identity === undefined
      ? { subject: context.front ?? "library", via: "none" }
      : { subject: identity.subject ?? identity.key, via: identity.via };
  if (identity?.issuer !== undefined) caller.issuer = identity.issuer;
  const client = identity?.client ?? context.clientInfo?.name;
  if (client !== undefined) caller.client = client;
  return caller;
}
