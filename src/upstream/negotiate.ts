import { McplexError, RpcError } from "../errors.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { REV2025_PROTOCOL_VERSIONS } from "../protocol/rev2025.js";
import { type Implementation, META, REV2026_PROTOCOL_VERSION, rev2026Envelope } from "../protocol/rev2026.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../protocol/revisions.js";
import type { RpcConnection } from "../protocol/rpc-connection.js";

/** What negotiation learned about the server. */
export interface Negotiated {
  protocolVersion: string;
  /** `true` for 2026-07-28: no session, `_meta` envelope on every request. */
  stateless: boolean;
  serverInfo?: Implementation;
  capabilities: Record<string, unknown>;
  instructions?: string;
}

export interface NegotiateOptions {
  server: string;
  clientInfo: Implementation;
  capabilities: Record<string, unknown>;
  /** Pin one revision (no probing), e.g. for servers that die on unknown methods. */
  protocolVersion?: string;
  signal?: AbortSignal;
  timeout?: number;
}

/**
 * Finds the newest revision both sides speak, on the connection already open —
 * a stdio server is never spawned twice. A `server/discover` probe answers for
 * 2026 servers; any error answer (2025 servers say "method not found") falls back
 * to the `initialize` handshake on the same connection.
 */
export async function negotiate(connection: RpcConnection, options: NegotiateOptions): Promise<Negotiated> {
  const pinned = options.protocolVersion;
  if (pinned !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(pinned)) {
    throw new McplexError(
      "INVALID_ARGUMENT",
      `${options.server}: protocol version ${pinned} is not supported; use one of ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
      { server: options.server },
    );
  }
  if (pinned === undefined || pinned === REV2026_PROTOCOL_VERSION) {
    const stateless = await probeRev2026(connection, options);
    if (stateless !== undefined) return stateless;
    if (pinned !== undefined) {
      throw new McplexError(
        "PROTOCOL_ERROR",
        `${options.server}: the server does not speak ${REV2026_PROTOCOL_VERSION} (server/discover was refused)`,
        { server: options.server, hint: "remove the protocolVersion pin to allow the 2025 handshake" },
      );
    }
  }
  return initialize(connection, options, pinned ?? REV2025_PROTOCOL_VERSIONS[0]);
}

async function probeRev2026(
  connection: RpcConnection,
  options: NegotiateOptions,
): Promise<Negotiated | undefined> {
  const requestOptions = { signal: options.signal, timeout: options.timeout };
  let version: string = REV2026_PROTOCOL_VERSION;
  for (let attempt = 0; attempt < 2; attempt++) {
    let result: {
      supportedVersions?: unknown;
      capabilities?: unknown;
      instructions?: unknown;
      _meta?: unknown;
    };
    try {
      result = await connection.request(
        "server/discover",
        { _meta: rev2026Envelope(version, options.clientInfo, options.capabilities) },
        requestOptions,
      );
    } catch (error) {
      if (!(error instanceof RpcError)) {
        // Over HTTP a 2025 server refuses a session-less request with a 4xx status.
        const status = httpStatus(error);
        if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403) {
          return undefined;
        }
        throw error;
      }
      // A 2026 server that wants another stateless revision says which ones it has.
      const supported = (error.data as { supported?: unknown } | undefined)?.supported;
      if (error.code === ErrorCode.UnsupportedProtocolVersion && Array.isArray(supported) && attempt === 0) {
        const mutual = supported.find((v) => v === REV2026_PROTOCOL_VERSION);
        if (mutual !== undefined) {
          version = mutual;
          continue;
        }
      }
      return undefined;
    }
    const supported = Array.isArray(result?.supportedVersions) ? (result.supportedVersions as string[]) : [];
    if (!supported.includes(REV2026_PROTOCOL_VERSION)) return undefined;
    const meta = (result._meta ?? {}) as Record<string, unknown>;
    const negotiated: Negotiated = {
      protocolVersion: REV2026_PROTOCOL_VERSION,
      stateless: true,
      capabilities: (result.capabilities ?? {}) as Record<string, unknown>,
    };
    const serverInfo = meta[META.serverInfo] as Implementation | undefined;
    if (serverInfo !== undefined) negotiated.serverInfo = serverInfo;
    if (typeof result.instructions === "string") negotiated.instructions = result.instructions;
    return negotiated;
  }
  return undefined;
}

async function initialize(
  connection: RpcConnection,
  options: NegotiateOptions,
  version: string,
): Promise<Negotiated> {
  const result = await connection.request<{
    protocolVersion?: string;
    capabilities?: Record<string, unknown>;
    serverInfo?: Implementation;
    instructions?: string;
  }>(
    "initialize",
    { protocolVersion: version, capabilities: options.capabilities, clientInfo: options.clientInfo },
    { signal: options.signal, timeout: options.timeout },
  );
  const agreed = result?.protocolVersion;
  if (typeof agreed !== "string" || !(REV2025_PROTOCOL_VERSIONS as readonly string[]).includes(agreed)) {
    throw new McplexError(
      "PROTOCOL_ERROR",
      `${options.server}: server answered initialize with protocol version ${String(agreed)}, which mcplex does not speak (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      {
        server: options.server,
        // Running the command by hand shows nothing here: it starts fine, it only speaks another revision.
        hint: `Update ${options.server} to a release that speaks one of ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}, or, if it speaks one of them besides ${String(agreed)}, pin it with protocolVersion.`,
      },
    );
  }
  await connection.notify("notifications/initialized");
  const negotiated: Negotiated = {
    protocolVersion: agreed,
    stateless: false,
    capabilities: result.capabilities ?? {},
  };
  if (result.serverInfo !== undefined) negotiated.serverInfo = result.serverInfo;
  if (typeof result.instructions === "string") negotiated.instructions = result.instructions;
  return negotiated;
}

/** The HTTP status behind a transport error, if there is one. */
export function httpStatus(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const data = (e as { data?: { status?: unknown } }).data;
    if (typeof data?.status === "number") return data.status;
    const status = (e as { status?: unknown }).status;
    if (typeof status === "number") return status;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
