import { ErrorCode, RpcError } from "../errors.js";
import { LEGACY_PROTOCOL_VERSIONS, META, MODERN_PROTOCOL_VERSION } from "../upstream/negotiate.js";

/** The default port of `mcplex serve --http`. */
export const DEFAULT_PORT = 8420;

/** Revisions the gateway serves with the `initialize` handshake. */
export const SERVED_LEGACY_VERSIONS: readonly string[] = LEGACY_PROTOCOL_VERSIONS;
/** Revisions the gateway serves statelessly. */
export const SERVED_MODERN_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

/** MCP 2026 error codes. */
export const HEADER_MISMATCH = -32020;
export const MISSING_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Methods that exist only in the 2025 revisions (404/-32601 when a 2026 request names them). */
export const LEGACY_ONLY_METHODS = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

/** Methods that exist only in 2026-07-28. */
export const MODERN_ONLY_METHODS = new Set(["server/discover", "subscriptions/listen"]);

/** Results that carry `ttlMs` and `cacheScope` in 2026. */
export const CACHEABLE_METHODS = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

/** Methods that may answer `input_required` in 2026. */
export const INPUT_REQUIRED_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The 2026 per-request envelope, read from `params._meta`. */
export interface Envelope {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: { name: string; version: string };
  logLevel?: string;
}

/** The protocol version a request's envelope claims, if it has one. */
export function envelopeVersion(params: unknown): string | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const version = meta?.[META.protocolVersion];
  return typeof version === "string" ? version : undefined;
}

/**
 * Reads and checks the envelope of a 2026 request: a supported version and the
 * required keys, else the precise error the spec names.
 */
export function readEnvelope(params: Record<string, unknown> | undefined): Envelope {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[META.protocolVersion];
  if (typeof version !== "string") {
    throw new RpcError(-32602, `Invalid params: _meta["${META.protocolVersion}"] is required`);
  }
  if (!SERVED_MODERN_VERSIONS.includes(version)) {
    throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {
      supported: [...SERVED_MODERN_VERSIONS],
      requested: version,
    });
  }
  const capabilities = meta?.[META.clientCapabilities];
  if (typeof capabilities !== "object" || capabilities === null || Array.isArray(capabilities)) {
    throw new RpcError(-32602, `Invalid params: _meta["${META.clientCapabilities}"] must be an object`);
  }
  const envelope: Envelope = {
    protocolVersion: version,
    clientCapabilities: capabilities as Record<string, unknown>,
  };
  const info = meta?.[META.clientInfo];
  if (typeof info === "object" && info !== null)
    envelope.clientInfo = info as { name: string; version: string };
  const level = meta?.[META.logLevel];
  if (typeof level === "string") envelope.logLevel = level;
  return envelope;
}

/** Logging levels in increasing severity (RFC 5424 order as MCP uses it). */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Whether a message at `level` passes a threshold of `min`. */
export function logPasses(level: unknown, min: string | undefined): boolean {
  if (min === undefined) return false;
  const at = LOG_LEVELS.indexOf(String(level));
  return at === -1 || at >= LOG_LEVELS.indexOf(min);
}

/** The answer to a message that is not JSON, on every front (id null: none could be read). */
export function parseErrorAnswer(error: unknown): {
  jsonrpc: "2.0";
  id: null;
  error: { code: number; message: string };
} {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    jsonrpc: "2.0",
    id: null,
    error: { code: ErrorCode.ParseError, message: `Parse error: ${reason}` },
  };
}
