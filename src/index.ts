/**
 * mcplex public API. Named exports only: what is listed here is supported.
 */

export type {
  LlmConfig,
  McplexConfig,
  ProfileConfig,
  RemoteServerConfig,
  ServerConfig,
  StdioServerConfig,
  TokenConfig,
  ToolFilter,
  TransportKind,
  WorkspaceRule,
  WorkspaceServerConfig,
} from "./config/types.js";
export {
  AbortedError,
  ConfigError,
  ErrorCode,
  type ErrorFields,
  McplexError,
  type McplexErrorCode,
  NotFoundError,
  RpcError,
  SecretStoreError,
  TimeoutError,
  UpstreamUnavailableError,
} from "./errors.js";
