/**
 * Every JSON-RPC and MCP error code mcplex sends or reads, by name. Code compares and
 * builds wire errors with these names, never with the numbers.
 */
export const ErrorCode = {
  /** JSON-RPC: the message is not JSON. */
  ParseError: -32700,
  /** JSON-RPC: not a valid request object (or refused before it was read: a limit, a bad header). */
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /**
   * Implementation-defined server error: the HTTP fronts answer it with the refusals that
   * carry their meaning in the status (auth, limits, content type, timeouts).
   */
  ServerError: -32000,
  /** A 2025 HTTP session id the gateway does not know (the client must initialize again). */
  SessionNotFound: -32001,
  /**
   * mcplex: the caller is known but may not make this request: its access token lacks scopes
   * (`data: { reason: "insufficient_scope", scope }`). The HTTP fronts answer it 403 with a
   * `WWW-Authenticate` challenge naming the scopes (step-up).
   */
  Forbidden: -32003,
  /** MCP: resource not found. */
  ResourceNotFound: -32002,
  /** MCP 2026: an `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` header disagrees with the body. */
  HeaderMismatch: -32020,
  /** MCP 2026: the request needs a client capability its envelope did not declare. */
  MissingClientCapability: -32021,
  /** MCP 2026: the envelope names a protocol revision the server does not speak. */
  UnsupportedProtocolVersion: -32022,
  /** MCP 2025-06-18+: URL elicitation required. */
  UrlElicitationRequired: -32042,
} as const;

/** One of the {@link ErrorCode} values. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];
