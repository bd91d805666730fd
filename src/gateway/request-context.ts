/**
 * What the gateway knows about the client behind one request, whatever the front
 * (stdio, HTTP, WebSocket) and the protocol generation.
 */
export interface RequestContext {
  /** `true` for a 2026-07-28 request (envelope, no session). */
  modern: boolean;
  protocolVersion: string;
  /** The client's declared capabilities: per request in 2026, per session in 2025. */
  clientCapabilities: Record<string, unknown>;
  /** The catalog view this client may see. */
  profile?: string;
  /**
   * The session the request came on (absent for stateless 2026 HTTP requests): servers marked
   * `share: false` get a connection per session.
   */
  client?: object;
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
