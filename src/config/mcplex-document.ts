import { isDeepStrictEqual } from "node:util";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_SIZE } from "./read-audit.js";
import { SANDBOX_DEFAULTS } from "./read-sandbox.js";
import { SERVER_DEFAULTS } from "./read-server.js";
import type {
  AuditConfig,
  McplexConfig,
  ProfileConfig,
  SandboxConfig,
  ServerConfig,
  ToolFilter,
} from "./types.js";
import type { RawMap } from "./value-reader.js";

/**
 * A config as an mcplex file's data (`servers`, `available`, `profiles`, `tokens`, `llm`,
 * `serve`, `telemetry`, `interceptors`, `policies`, `guardrails`, `quotas`, `composites`, `audit`, `users`): loading it gives the same
 * servers, profiles and policies. Defaults are left out; durations
 * are written in milliseconds. Servers given in code (`transport: "local"`) cannot be written
 * and are left out.
 *
 * @example
 * writeFileSync("mcplex.yaml", stringify(mcplexDocument(config)));
 */
export function mcplexDocument(config: McplexConfig): RawMap {
  const doc: RawMap = {};
  const servers = config.servers.filter((s) => s.transport !== "local");
  doc.servers = Object.fromEntries(servers.map((server) => [server.name, serverEntry(server)]));
  const available = (config.available ?? []).filter((s) => s.transport !== "local");
  if (available.length > 0)
    doc.available = Object.fromEntries(available.map((server) => [server.name, serverEntry(server)]));
  if (Object.keys(config.profiles).length > 0) {
    doc.profiles = Object.fromEntries(
      Object.entries(config.profiles).map(([name, profile]) => [name, profileEntry(profile)]),
    );
  }
  if (config.tokens.length > 0) doc.tokens = config.tokens.map((token) => ({ ...token }));
  for (const key of ["llm", "serve", "telemetry", "interceptors", "users"] as const) {
    if (config[key] !== undefined) doc[key] = structuredClone(config[key]);
  }
  if (config.policies !== undefined)
    doc.policies = config.policies.map(({ phase, ...rule }) => ({
      ...structuredClone(rule),
      ...(phase === "request" ? {} : { phase }),
    }));
  if (config.guardrails !== undefined) doc.guardrails = structuredClone(config.guardrails);
  if (config.quotas !== undefined) doc.quotas = structuredClone(config.quotas);
  if (config.composites !== undefined) doc.composites = structuredClone(config.composites);
  if (config.audit !== undefined) doc.audit = auditEntry(config.audit);
  return doc;
}

/** `true` for the defaults, else the whole map (sizes in bytes); `false` as written. */
function sandboxEntry(sandbox: SandboxConfig | false): RawMap | boolean {
  if (sandbox === false) return false;
  return isDeepStrictEqual(sandbox, SANDBOX_DEFAULTS) ? true : { ...structuredClone(sandbox) };
}

function serverEntry(server: Exclude<ServerConfig, { transport: "local" }>): RawMap {
  const entry: RawMap = {};
  switch (server.transport) {
    case "stdio":
      entry.command = server.command;
      if (server.args.length > 0) entry.args = [...server.args];
      if (Object.keys(server.env).length > 0) entry.env = { ...server.env };
      if (server.cwd !== undefined) entry.cwd = server.cwd;
      if (server.sandbox !== undefined) entry.sandbox = sandboxEntry(server.sandbox);
      break;
    case "workspace":
      entry.type = "workspace";
      entry.root = server.root;
      if (server.allowWrite) entry.allowWrite = true;
      if (server.rules.length > 0)
        entry.rules = server.rules.map((rule) => ({ ...rule, ops: [...rule.ops] }));
      break;
    case "replay":
      entry.transport = "replay";
      entry.recording = server.recording[0];
      if (server.mode !== "sequential") entry.mode = server.mode;
      if (server.speed !== 1) entry.speed = server.speed;
      break;
    default:
      // Always written: our files infer only from the scheme, other clients also from an /sse path.
      entry.url = server.url;
      entry.transport = server.transport;
      if (Object.keys(server.headers).length > 0) entry.headers = { ...server.headers };
      if (server.oauth !== undefined) entry.oauth = structuredClone(server.oauth);
  }
  for (const key of ["enabled", "timeout", "startTimeout", "lazy"] as const) {
    if (server[key] !== SERVER_DEFAULTS[key]) entry[key] = server[key];
  }
  const optional = [
    "prefix",
    "protocolVersion",
    "share",
    "maxSessions",
    "credentials",
    "maxUsers",
    "breaker",
    "backoff",
    "cache",
    "record",
    "simulate",
    "pin",
    "overrides",
  ] as const;
  for (const key of optional) if (server[key] !== undefined) entry[key] = structuredClone(server[key]);
  const tools = filterEntry(server.tools);
  if (tools !== undefined) entry.tools = tools;
  return entry;
}

function profileEntry(profile: ProfileConfig): RawMap {
  const { tools, resources, prompts, ...rest } = profile;
  // `servers`, `mode`, `pin` and whatever else a profile holds are written as they are.
  const entry: RawMap = structuredClone(rest);
  for (const [key, filter] of [
    ["tools", tools],
    ["resources", resources],
    ["prompts", prompts],
  ] as const) {
    const written = filterEntry(filter);
    if (written !== undefined) entry[key] = written;
  }
  return entry;
}

function filterEntry(filter: ToolFilter | undefined): RawMap | undefined {
  if (filter === undefined || (filter.allow === undefined && filter.deny === undefined)) return undefined;
  return {
    ...(filter.allow === undefined ? {} : { allow: [...filter.allow] }),
    ...(filter.deny === undefined ? {} : { deny: [...filter.deny] }),
  };
}

function auditEntry(audit: AuditConfig): RawMap {
  const entry: RawMap = { to: audit.to };
  if (audit.maxSize !== DEFAULT_AUDIT_MAX_SIZE) entry.maxSize = audit.maxSize;
  if (audit.keep !== DEFAULT_AUDIT_KEEP) entry.keep = audit.keep;
  if (audit.maxLine !== undefined) entry.maxLine = audit.maxLine;
  if (audit.keepFor !== undefined) entry.keepFor = audit.keepFor;
  if (audit.content) entry.content = true;
  return entry;
}
