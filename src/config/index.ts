/**
 * The config module: finding, parsing, validating and expanding mcplex config files in every
 * supported dialect, plus the encrypted secret store. Named exports only.
 */

export {
  type ConfigCheck,
  type ConfigSummary,
  type ConfigWarning,
  checkConfig,
  type ServerSummary,
  summarizeConfig,
} from "./check-config.js";
export { configErrorFrom, joinPath } from "./config-issues.js";
export { type ConvertedConfig, convertConfig } from "./convert-config.js";
export { type ExpandContext, expandVariables, type SecretResolver } from "./expand-variables.js";
export {
  CONFIG_FILE_NAMES,
  defaultConfig,
  type LoadConfigOptions,
  loadConfig,
  type ResolveConfigOptions,
  resolveConfigPath,
  type SecretSource,
} from "./load-config.js";
export { mcplexDocument } from "./mcplex-document.js";
export {
  type ConfigFormat,
  detectFormat,
  normalizeConfig,
  type ParseConfigOptions,
  parseConfig,
} from "./parse-config.js";
export { type ConfigSyntax, parseDocument } from "./parse-document.js";
export { MAX_DURATION_MS, parseDuration } from "./parse-duration.js";
export { SERVER_DEFAULTS, SERVER_NAME } from "./read-server.js";
export { REDACTED, redact, redactor } from "./redact.js";
export { defaultSecretStorePath, SECRET_NAME, SecretStore, type SecretStoreOptions } from "./secret-store.js";
export type {
  BackoffConfig,
  BreakerConfig,
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
} from "./types.js";
