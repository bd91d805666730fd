import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { IssueCollector, joinPath } from "./config-issues.js";
import type { DialectResult } from "./dialects/dialect-result.js";
import { readForeignServer } from "./dialects/foreign-server.js";
import { isMcpClientServers, readMcpClientServers } from "./dialects/mcp-client-servers.js";
import { isMcpServersMap, readMcpServersMap } from "./dialects/mcp-servers-map.js";
import { isServerMap, readServerMap } from "./dialects/server-map.js";
import type { SecretResolver } from "./expand-variables.js";
import { readOrigin } from "./origin-rules.js";
import { type ConfigSyntax, parseDocument } from "./parse-document.js";
import { readAudit } from "./read-audit.js";
import { readAuth } from "./read-auth.js";
import { readCluster } from "./read-cluster.js";
import { COMPOSITE_SERVER, readComposites } from "./read-composites.js";
import { checkUserPlaceholders, readUsers } from "./read-credentials.js";
import { readGuardrails } from "./read-guardrails.js";
import { readInterceptorModules } from "./read-interceptors.js";
import { readOverrides } from "./read-overrides.js";
import { readPolicies } from "./read-policies.js";
import { readQuotas } from "./read-quotas.js";
import { readSandbox } from "./read-sandbox.js";
import {
  checkName,
  type ReadContext,
  readMcplexServer,
  readPin,
  readToolFilter,
  resolveReadPath,
} from "./read-server.js";
import { urlCredentials } from "./redact.js";
import { tokenProblem } from "./token-rules.js";
import type {
  CatalogMode,
  LlmConfig,
  McplexConfig,
  ProfileConfig,
  SandboxConfig,
  ServeConfig,
  ServerConfig,
  TelemetryConfig,
  TokenConfig,
} from "./types.js";
import { type RawMap, type ReferenceKeeper, ValueReader } from "./value-reader.js";

/** Options of {@link parseConfig} and {@link normalizeConfig}. */
export interface ParseConfigOptions {
  /** File path (or a label such as `"<inline>"`) shown in errors; picks JSON or YAML by extension. */
  source: string;
  /** Variables for `${VAR}`; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values for `${secret:NAME}`; without it every secret reference is SECRET_MISSING. */
  secretResolver?: SecretResolver;
  /** Working directory: `${workspaceFolder}` in VS Code/Cursor files. Default `process.cwd()`. */
  cwd?: string;
  /** Base of relative `cwd`/`root` paths. Default: the directory of `source`. */
  baseDir?: string;
  /** Force a parser instead of choosing by extension. */
  syntax?: ConfigSyntax;
  /** Keep `${...}` references unexpanded, as stand-ins (for `mcplex config convert`). */
  keepReferences?: ReferenceKeeper;
}

/** The dialects a config file can be written in. */
export type ConfigFormat = Exclude<McplexConfig["format"], "default">;

const TOP_LEVEL_KEYS = [
  "servers",
  "available",
  "profiles",
  "tokens",
  "llm",
  "serve",
  "telemetry",
  "cluster",
  "interceptors",
  "policies",
  "guardrails",
  "quotas",
  "composites",
  "auth",
  "audit",
  "users",
  "pin",
  "sandbox",
];
const VSCODE_TYPES = new Set(["stdio", "http", "sse"]);

/**
 * Tells the dialects apart. `mcpServers` is Claude Desktop / Cursor / Claude Code. A
 * `servers` map is both ours and VS Code's: the file is VS Code's when it has VS Code's
 * `inputs`, or when it has none of our other top-level keys (`profiles`, `tokens`, `llm`) and
 * a server carries a VS Code transport `type` (stdio, http, sse). In our schema `type` only
 * takes `workspace` and the transport key is `transport`, so our files never look like that.
 * Applications' own files: a `mcp: client: servers:` list, a `mcp_servers:` map (at the top or
 * under `agent_config: agent_settings: AGENT:`), or a bare map of servers keyed by id.
 */
export function detectFormat(doc: RawMap): ConfigFormat {
  if ("mcpServers" in doc) return "mcpServers";
  if (isMcpClientServers(doc)) return "mcp-client-servers";
  if (isMcpServersMap(doc)) return "mcp_servers";
  if (isServerMap(doc, TOP_LEVEL_KEYS)) return "server-map";
  if ("inputs" in doc && "servers" in doc) return "vscode";
  const servers = doc.servers;
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) return "mcplex";
  if (TOP_LEVEL_KEYS.some((key) => key !== "servers" && key in doc)) return "mcplex";
  const entries = Object.values(servers as RawMap);
  const typed = entries.some(
    (e) => typeof e === "object" && e !== null && VSCODE_TYPES.has(String((e as RawMap).type)),
  );
  return typed ? "vscode" : "mcplex";
}

/**
 * Parses, validates and expands the text of a config file in any supported dialect.
 * Throws a ConfigError listing every problem found (each with its exact path).
 *
 * @example
 * const config = parseConfig(text, { source: "mcplex.yaml", env: process.env });
 */
export function parseConfig(text: string, options: ParseConfigOptions): McplexConfig {
  return normalizeConfig(parseDocument(text, options.source, options.syntax), options);
}

/**
 * Validates and expands already-parsed config data (the object form of a config file), for
 * library users who build their config in code.
 */
export function normalizeConfig(data: unknown, options: ParseConfigOptions): McplexConfig {
  const cwd = options.cwd ?? process.cwd();
  const issues = new IssueCollector(options.source);
  const baseEnv = options.env ?? process.env;
  const env = { workspaceFolder: cwd, userHome: homedir(), ...baseEnv };
  const reader = new ValueReader(
    issues,
    { env, ...(options.secretResolver === undefined ? {} : { secret: options.secretResolver }) },
    options.keepReferences,
  );
  const ctx: ReadContext = { reader, baseDir: options.baseDir ?? dirname(resolve(cwd, options.source)) };
  if (data !== undefined && data !== null && (typeof data !== "object" || Array.isArray(data))) {
    issues.add("", "the file must hold a map with a `servers` (or `mcpServers`) key");
    issues.throwIfAny([]);
  }
  const doc = (data ?? {}) as RawMap;
  const format = detectFormat(doc);
  const config: McplexConfig = {
    source: options.source,
    format,
    servers: [],
    profiles: {},
    tokens: [],
    secrets: [],
  };
  if (format === "mcplex") {
    // `$schema` (editor support) and `x-*` (YAML anchors to reuse) are not ours to check.
    const ours = Object.entries(doc).filter(([key]) => key !== "$schema" && !key.startsWith("x-"));
    reader.knownKeys(Object.fromEntries(ours), "", TOP_LEVEL_KEYS);
    config.servers = readServers(ctx, doc.servers, "servers", readMcplexServer);
    if (doc.available !== undefined && doc.available !== null)
      config.available = readAvailable(ctx, doc.available, config.servers);
    const { pin } = readPin(reader, doc.pin, "pin");
    if (pin !== undefined) {
      config.pin = pin;
      // The default is applied here, so a server's `pin` is all the hub needs to know.
      for (const server of [...config.servers, ...(config.available ?? [])]) server.pin ??= pin;
    }
    const sandbox = readSandbox(reader, doc.sandbox, "sandbox", (p) => resolveReadPath(ctx, p));
    if (sandbox) {
      config.servers = config.servers.map((server) => withSandbox(server, sandbox, ctx.baseDir));
      if (config.available !== undefined)
        config.available = config.available.map((server) => withSandbox(server, sandbox, ctx.baseDir));
    }
    config.profiles = readProfiles(reader, doc.profiles);
    config.tokens = readTokens(reader, doc.tokens);
    const llm = readLlm(reader, doc.llm);
    if (llm !== undefined) config.llm = llm;
    const serve = readServe(reader, doc.serve);
    if (serve !== undefined) config.serve = serve;
    if (serve?.serverTools === true && (config.available ?? []).length === 0)
      reader.fail(
        "serve.serverTools",
        'offers the servers under "available:", and there are none; add some or remove it',
      );
    const telemetry = readTelemetry(reader, doc.telemetry);
    if (telemetry !== undefined) config.telemetry = telemetry;
    const cluster = readCluster(reader, doc.cluster);
    if (cluster !== undefined) config.cluster = cluster;
    if (doc.interceptors !== undefined && doc.interceptors !== null)
      config.interceptors = readInterceptorModules(ctx, doc.interceptors);
    const policies = readPolicies(reader, doc.policies);
    if (policies !== undefined && policies.length > 0) config.policies = policies;
    const guardrails = readGuardrails(reader, doc.guardrails);
    if (guardrails !== undefined && guardrails.length > 0) config.guardrails = guardrails;
    const quotas = readQuotas(reader, doc.quotas);
    if (quotas !== undefined && quotas.length > 0) config.quotas = quotas;
    const composites = readComposites(reader, doc.composites);
    if (composites !== undefined) config.composites = composites;
    if (
      doc.composites !== undefined &&
      doc.composites !== null &&
      config.servers.some((s) => s.name === COMPOSITE_SERVER)
    )
      reader.fail(
        joinPath("servers", COMPOSITE_SERVER),
        `"${COMPOSITE_SERVER}" is the name composites: are listed under; give this server another name`,
      );
    const auth = readAuth(reader, doc.auth, Object.keys(config.profiles));
    if (auth !== undefined) config.auth = auth;
    if (auth !== undefined && cluster !== undefined && auth.resource === undefined && doc.auth !== null)
      reader.fail(
        "auth.resource",
        'is required with cluster: every replica must name the URL clients reach them at (the load balancer\'s), such as "https://mcp.example.com"',
      );
    const audit = readAudit(ctx, doc.audit);
    if (audit !== undefined) config.audit = audit;
    const users = readUsers(reader, doc.users);
    if (users !== undefined) config.users = users;
  } else if (DIALECTS[format] !== undefined) {
    const { servers, profiles, disabledBlock } = DIALECTS[format](ctx, doc);
    Object.assign(config, { servers, profiles }, disabledBlock && { disabledBlock });
  } else {
    const key = format === "mcpServers" ? "mcpServers" : "servers";
    config.servers = readServers(ctx, doc[key], key, readForeignServer);
  }
  const listKey = format === "mcplex" ? "servers" : format === "mcpServers" ? "mcpServers" : "servers";
  for (const server of config.servers) checkUserPlaceholders(reader, server, joinPath(listKey, server.name));
  for (const server of config.available ?? [])
    checkUserPlaceholders(reader, server, joinPath("available", server.name));
  config.secrets = [...reader.secrets];
  issues.throwIfAny(config.secrets);
  return config;
}

type ServerReader = typeof readMcplexServer;

/** The top-level `sandbox:` default, for a stdio server that says nothing of its own. */
function withSandbox(server: ServerConfig, sandbox: SandboxConfig, configDir: string): ServerConfig {
  if (server.transport !== "stdio" || server.sandbox !== undefined) return server;
  return { ...server, sandbox, configDir };
}

/** `available:`: servers read like `servers:` entries, under names of their own. */
function readAvailable(ctx: ReadContext, value: unknown, servers: ServerConfig[]): ServerConfig[] {
  const available = readServers(ctx, value, "available", readMcplexServer);
  const started = new Set(servers.map((s) => s.name));
  for (const server of available) {
    if (started.has(server.name)) {
      ctx.reader.fail(
        joinPath("available", server.name),
        `is also under "servers"; a server is either started with the hub (servers) or on request (available), so rename or remove one`,
      );
    }
  }
  return available;
}

/** The shapes other applications keep their servers in. */
const DIALECTS: Partial<Record<ConfigFormat, (ctx: ReadContext, doc: RawMap) => DialectResult>> = {
  "mcp-client-servers": readMcpClientServers,
  "server-map": readServerMap,
  mcp_servers: readMcpServersMap,
};

function readServers(ctx: ReadContext, value: unknown, path: string, read: ServerReader): ServerConfig[] {
  // `servers:` with nothing under it (a starter file) is an empty map, not an error.
  const node = ctx.reader.map(value ?? undefined, path);
  const servers: ServerConfig[] = [];
  for (const [name, entry] of Object.entries(node ?? {})) {
    const entryPath = joinPath(path, name);
    const nameOk = checkName(ctx.reader, name, entryPath, "server");
    const server = read(ctx, name, entry, entryPath);
    if (server !== undefined && nameOk) servers.push(server);
  }
  return servers;
}

const PROFILE_KEYS = ["servers", "tools", "resources", "prompts", "mode", "pin", "overrides"];

function readProfiles(reader: ValueReader, value: unknown): Record<string, ProfileConfig> {
  const node = reader.map(value ?? undefined, "profiles");
  const profiles: Record<string, ProfileConfig> = {};
  for (const [name, entry] of Object.entries(node ?? {})) {
    const path = joinPath("profiles", name);
    checkName(reader, name, path, "profile");
    const profile = reader.map(entry ?? {}, path);
    if (profile === undefined) continue;
    reader.knownKeys(profile, path, PROFILE_KEYS);
    const servers = reader.stringList(profile.servers, joinPath(path, "servers"));
    profiles[name] = {
      ...(servers === undefined ? {} : { servers }),
      tools: readToolFilter(reader, profile.tools, joinPath(path, "tools")),
      ...readModeAndPin(reader, profile, path),
      ...readOverrides(reader, profile.overrides, joinPath(path, "overrides")),
    };
    for (const kind of ["resources", "prompts"] as const) {
      if (profile[kind] !== undefined && profile[kind] !== null)
        profiles[name][kind] = readToolFilter(reader, profile[kind], joinPath(path, kind));
    }
  }
  return profiles;
}

function readTokens(reader: ValueReader, value: unknown): TokenConfig[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    reader.fail("tokens", "must be a list of {token, profile} entries");
    return [];
  }
  const tokens: TokenConfig[] = [];
  value.forEach((item, i) => {
    const path = joinPath("tokens", i);
    const entry = reader.map(item, path);
    if (entry === undefined) return;
    reader.knownKeys(entry, path, ["token", "profile", "operator", "mode"]);
    if (entry.token === undefined) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows config syntax
      reader.fail(path, 'needs a "token"; use "${secret:NAME}" to keep it out of the file');
      return;
    }
    const token = reader.string(entry.token, joinPath(path, "token"));
    const profile = reader.nonEmpty(entry.profile, joinPath(path, "profile"));
    const operator = reader.boolean(entry.operator, joinPath(path, "operator"));
    const mode = readMode(reader, entry.mode, joinPath(path, "mode"));
    if (token === undefined) return;
    reader.secrets.add(token);
    // A kept `${secret:...}` (config convert) has no value to check.
    const problem = reader.probe(token) === token ? tokenProblem(token) : undefined;
    if (problem !== undefined) reader.fail(joinPath(path, "token"), problem);
    tokens.push({
      token,
      ...(profile === undefined ? {} : { profile }),
      ...(operator === true ? { operator } : {}),
      ...(mode === undefined ? {} : { mode }),
    });
  });
  return tokens;
}

/** The `serve:` block. */
function readServe(reader: ValueReader, value: unknown): ServeConfig | undefined {
  const node = reader.map(value, "serve");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "serve", [
    "readyWait",
    "mode",
    "pin",
    "cache",
    "code",
    "serverTools",
    "allowedOrigins",
    "idleTimeout",
    "maxConnections",
    "maxConnectionsPerClient",
    "memoryBudget",
    "cards",
  ]);
  const serve: ServeConfig = { ...readModeAndPin(reader, node, "serve") };
  const cache = reader.map(node.cache, "serve.cache");
  if (cache !== undefined) {
    reader.knownKeys(cache, "serve.cache", ["maxEntries", "maxBytes"]);
    const maxEntries = reader.count(cache.maxEntries, "serve.cache.maxEntries");
    const maxBytes = reader.count(cache.maxBytes, "serve.cache.maxBytes", 1024);
    serve.cache = {
      ...(maxEntries === undefined ? {} : { maxEntries }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
    };
  }
  const code = reader.map(node.code, "serve.code");
  if (code !== undefined) {
    const counts = [
      "memoryBytes",
      "maxToolCalls",
      "maxParallelCalls",
      "maxOutputBytes",
      "maxQueued",
    ] as const;
    reader.knownKeys(code, "serve.code", ["timeout", "queueTimeout", ...counts]);
    serve.code = {};
    const wallMs = reader.duration(code.timeout, "serve.code.timeout");
    if (wallMs !== undefined) serve.code.wallMs = wallMs;
    const queueMs = reader.duration(code.queueTimeout, "serve.code.queueTimeout");
    if (queueMs !== undefined) serve.code.queueMs = queueMs;
    for (const key of counts) {
      const value = reader.count(code[key], `serve.code.${key}`);
      if (value !== undefined) serve.code[key] = value;
    }
  }
  const serverTools = reader.boolean(node.serverTools, "serve.serverTools");
  if (serverTools !== undefined) serve.serverTools = serverTools;
  const readyWait = readZeroOrDuration(reader, node.readyWait, "serve.readyWait");
  if (readyWait !== undefined) serve.readyWait = readyWait;
  const origins = reader.stringList(node.allowedOrigins, "serve.allowedOrigins");
  if (origins !== undefined) {
    serve.allowedOrigins = [];
    origins.forEach((entry, i) => {
      const read = readOrigin(entry);
      if ("origin" in read) serve.allowedOrigins?.push(read.origin);
      else reader.fail(joinPath("serve.allowedOrigins", i), read.problem);
    });
  }
  const idleTimeout = reader.duration(node.idleTimeout, "serve.idleTimeout");
  if (idleTimeout !== undefined) serve.idleTimeout = idleTimeout;
  for (const key of ["maxConnections", "maxConnectionsPerClient"] as const) {
    const value = reader.count(node[key], `serve.${key}`);
    if (value !== undefined) serve[key] = value;
  }
  const memoryBudget = reader.byteSize(node.memoryBudget, "serve.memoryBudget");
  if (memoryBudget !== undefined) serve.memoryBudget = memoryBudget;
  const cards = reader.boolean(node.cards, "serve.cards");
  if (cards !== undefined) serve.cards = cards;
  return serve;
}

/** A catalog mode: `all`, `search` or `code`. */
function readMode(reader: ValueReader, value: unknown, path: string): CatalogMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "all" || value === "search" || value === "code") return value;
  reader.fail(path, `must be all, search or code, not ${JSON.stringify(value)}`);
  return undefined;
}

/** `mode` and `pin` of a profile or of `serve:`. */
function readModeAndPin(
  reader: ValueReader,
  node: Record<string, unknown>,
  path: string,
): { mode?: CatalogMode; pin?: string[] } {
  const mode = readMode(reader, node.mode, joinPath(path, "mode"));
  const pin = reader.stringList(node.pin, joinPath(path, "pin"));
  return { ...(mode === undefined ? {} : { mode }), ...(pin === undefined ? {} : { pin }) };
}

/** The `telemetry:` block. */
function readTelemetry(reader: ValueReader, value: unknown): TelemetryConfig | undefined {
  const node = reader.map(value, "telemetry");
  if (node === undefined) return undefined;
  const keys = ["enabled", "endpoint", "serviceName", "captureContent", "sampleRatio", "headers"] as const;
  reader.knownKeys(node, "telemetry", keys);
  const telemetry: TelemetryConfig = {};
  for (const key of ["enabled", "captureContent"] as const) {
    const flag = reader.boolean(node[key], `telemetry.${key}`);
    if (flag !== undefined) telemetry[key] = flag;
  }
  const endpoint = reader.nonEmpty(node.endpoint, "telemetry.endpoint");
  if (endpoint !== undefined) {
    if (!/^https?:\/\/[^/]/i.test(endpoint) || !URL.canParse(endpoint))
      reader.fail("telemetry.endpoint", 'must be an http(s) URL such as "http://localhost:4318"');
    else telemetry.endpoint = endpoint;
  }
  const serviceName = reader.nonEmpty(node.serviceName, "telemetry.serviceName");
  if (serviceName !== undefined) telemetry.serviceName = serviceName;
  if (node.sampleRatio !== undefined) {
    const ratio = node.sampleRatio;
    if (typeof ratio !== "number" || !(ratio >= 0 && ratio <= 1))
      reader.fail("telemetry.sampleRatio", "must be a number from 0 to 1, such as 0.1 for one trace in ten");
    else telemetry.sampleRatio = ratio;
  }
  const headers = reader.stringMap(node.headers, "telemetry.headers");
  if (headers !== undefined) {
    telemetry.headers = headers;
    for (const header of Object.values(headers)) reader.secrets.add(header);
  }
  return telemetry;
}

/** A duration that may also be 0 (`readyWait: 0`: never wait). */
function readZeroOrDuration(reader: ValueReader, value: unknown, path: string): number | undefined {
  if (value === 0 || value === "0") return 0;
  return reader.duration(value, path);
}

function readLlm(reader: ValueReader, value: unknown): LlmConfig | undefined {
  const node = reader.map(value, "llm");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "llm", ["baseUrl", "model", "apiKey", "provider"]);
  const llm: LlmConfig = {};
  for (const key of ["baseUrl", "model", "apiKey", "provider"] as const) {
    const text = reader.nonEmpty(node[key], joinPath("llm", key));
    if (text !== undefined) llm[key] = text;
  }
  if (llm.apiKey !== undefined) reader.secrets.add(llm.apiKey);
  if (llm.baseUrl !== undefined) {
    if (!/^https?:\/\/[^/]/i.test(llm.baseUrl) || !URL.canParse(llm.baseUrl)) {
      reader.fail("llm.baseUrl", 'must be an http(s) URL such as "http://localhost:11434/v1"');
    }
    for (const credential of urlCredentials(llm.baseUrl)) reader.secrets.add(credential);
  }
  return llm;
}
