import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import type { Envelope } from "../protocol/rev2026.js";

/**
 * What the gateway knows about the client behind one request, whatever the front
 * (stdio, HTTP, WebSocket) and the protocol revision.
 */
export interface RequestContext {
  /**
   * `true` for a request of a stateless revision (2026-07-28: an envelope in every request,
   * no session); `false` for a 2025 (or 2024-11-05) session's request.
   */
  stateless: boolean;
  protocolVersion: string;
  /** The client's declared capabilities: per request in 2026, per session in 2025. */
  clientCapabilities: Record<string, unknown>;
  /** The catalog view this client may see. */
  profile?: string;
  /**
   * How this client sees the tools, when its front decided (its token's `mode`, else the
   * front's); otherwise its profile's mode or the gateway's default apply.
   */
  mode?: CatalogMode;
  /**
   * Who is calling, as the front let it in: the token's key (`token#0`, never the token) or,
   * without tokens, the client's address. Results cached for one caller are never another's.
   */
  caller?: string;
  /**
   * The session the request came on (absent for stateless 2026 HTTP requests): servers marked
   * `share: false` get a connection per session.
   */
  client?: object;
  /** The 2025 session's id on the wire (`Mcp-Session-Id`), where it has one. */
  sessionId?: string;
  /** The HTTP request's headers, for a request that came alone on one (a 2026 POST). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** Aborted when the client cancels the request or goes away. */
  signal: AbortSignal;
  /** Minimum level of log notifications the client wants (2025 `logging/setLevel`, 2026 envelope). */
  logLevel?: string;
  /** Sends a notification tied to this request (progress, log). */
  notify(method: string, params: Record<string, unknown>): void;
  /**
   * Sends a request to the client and waits for its answer (2025 sessions only:
   * sampling, elicitation, roots). Absent when the channel cannot carry it.
   */
  requestClient?(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

/**
 * The context of a 2026 request, from its envelope (read with `readEnvelope`) and what the
 * front knows: the one place every front sets up a stateless request.
 */
export function statelessContext(
  envelope: Envelope,
  front: Pick<RequestContext, "signal" | "notify" | "profile" | "mode" | "caller" | "client" | "headers">,
): RequestContext {
  const ctx: RequestContext = {
    stateless: true,
    protocolVersion: envelope.protocolVersion,
    clientCapabilities: envelope.clientCapabilities,
    signal: front.signal,
    notify: front.notify,
  };
  if (front.profile !== undefined) ctx.profile = front.profile;
  if (front.mode !== undefined) ctx.mode = front.mode;
  if (front.caller !== undefined) ctx.caller = front.caller;
  if (front.client !== undefined) ctx.client = front.client;
  if (front.headers !== undefined) ctx.headers = front.headers;
  if (envelope.logLevel !== undefined) ctx.logLevel = envelope.logLevel;
  return ctx;
}
