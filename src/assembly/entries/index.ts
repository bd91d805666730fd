/**
 * mcplex public API. Named exports only: what is listed here is supported.
 */

export { Catalog } from "../../catalog/catalog.js";
export type {
  CatalogCollision,
  CatalogOptions,
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
} from "../../catalog/types.js";
export { type ConfigCheck, type ConfigSummary, checkConfig } from "../../config/check-config.js";
export { defaultConfig, type LoadConfigOptions, loadConfig } from "../../config/load-config.js";
export { type ParseConfigOptions, parseConfig } from "../../config/parse-config.js";
export { redact } from "../../config/redact.js";
export { SecretStore, type SecretStoreOptions } from "../../config/secret-store.js";
export type {
  BackoffConfig,
  BreakerConfig,
  LlmConfig,
  LocalServerConfig,
  McplexConfig,
  PinPolicy,
  ProfileConfig,
  RemoteServerConfig,
  ServerConfig,
  StdioServerConfig,
  TokenConfig,
  ToolFilter,
  TransportKind,
  WorkspaceRule,
  WorkspaceServerConfig,
} from "../../config/types.js";
export { memoryCredentialVault } from "../../credentials/memory-vault.js";
export {
  ConnectRequiredError,
  type CredentialVault,
  type UserConnectionPlan,
  type UserCredentialSource,
  type UserRef,
  type UserServerRecord,
} from "../../credentials/user-credentials.js";
export { userRefOf } from "../../credentials/user-ref.js";
export {
  AbortedError,
  ConfigError,
  type ConfigIssue,
  type ErrorFields,
  McplexError,
  type McplexErrorCode,
  NotFoundError,
  RpcError,
  SecretStoreError,
  TimeoutError,
  UpstreamUnavailableError,
} from "../../errors.js";
export type { SkillEntry, SkillFile } from "../../ext/skills/skill-entry.js";
export type { SkillsPage } from "../../ext/skills/skill-listing.js";
export type { HubSkill, LoadedSkill } from "../../ext/skills/skill-reader.js";
export {
  type CallRequest,
  compose,
  type Handler,
  type Interceptor,
  type JsonObject,
  type RequestContext,
  type RequestTarget,
} from "../../hub/call-pipeline.js";
export {
  type CallOptions,
  Hub,
  type HubEvent,
  type HubOptions,
  type LoadSkillOptions,
  type ServerStatus,
} from "../../hub/hub.js";
export { openPins } from "../../pins/open-pins.js";
export { lockFilePath, PinLockError } from "../../pins/pin-lock-file.js";
export type { FieldChange } from "../../pins/tool-diff.js";
export { toolFingerprint } from "../../pins/tool-fingerprint.js";
export { type ToolChange, ToolPins } from "../../pins/tool-pins.js";
export { ErrorCode } from "../../protocol/error-codes.js";
export { SUPPORTED_PROTOCOL_VERSIONS } from "../../protocol/revisions.js";
export type { Progress } from "../../protocol/rpc-connection.js";
export type { ServerRequest, ServerRequestHandler } from "../../protocol/server-requests.js";
export type { StoredToolList, ToolListStore } from "../../recording/tool-list-store.js";
export type { AvailableServer, CachedTool } from "../../servers/available-servers.js";
export type { BackoffOptions } from "../../upstream/backoff.js";
export { LocalServer, type LocalTool } from "../../upstream/local-server.js";
export type { UpstreamState } from "../../upstream/upstream.js";
export type { UpstreamStatsSnapshot } from "../../upstream/upstream-stats.js";
