/**
 * The stateless revision, 2026-07-28: no handshake and no session; every request carries
 * its envelope (revision, client capabilities and info, log level) in `params._meta`.
 */
import { RpcError } from "../errors.js";
import { ErrorCode } from "./error-codes.js";

/** The current, stateless revision. */
export const REV2026_PROTOCOL_VERSION = "2026-07-28";
/** The stateless revisions mcplex speaks (one so far). */
export const REV2026_PROTOCOL_VERSIONS: readonly string[] = [REV2026_PROTOCOL_VERSION];

/** `_meta` keys of the 2026 per-request envelope. */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
  logLevel: "io.modelcontextprotocol/logLevel",
} as const;

/** The client (or server) name and version an envelope carries. */
export interface Implementation {
  name: string;
  version: string;
  title?: string;
}

/** The 2026 per-request envelope, read from `params._meta`. */
export interface Envelope {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: { name: string; version: string };
  logLevel?: string;
}

/** The `_meta` envelope a 2026 request carries. */
export function rev2026Envelope(
  version: string,
  clientInfo: Implementation,
  capabilities: Record<string, unknown>,
): Record<string, unknown> {
  return {
    [META.protocolVersion]: version,
    [META.clientInfo]: clientInfo,
    [META.clientCapabilities]: capabilities,
  };
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
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params: _meta["${META.protocolVersion}"] is required`,
    );
  }
  if (!REV2026_PROTOCOL_VERSIONS.includes(version)) {
    throw new RpcError(ErrorCode.UnsupportedProtocolVersion, "Unsupported protocol version", {
      supported: [...REV2026_PROTOCOL_VERSIONS],
      requested: version,
    });
  }
  const capabilities = meta?.[META.clientCapabilities];
  if (typeof capabilities !== "object" || capabilities === null || Array.isArray(capabilities)) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params: _meta["${META.clientCapabilities}"] must be an object`,
    );
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
