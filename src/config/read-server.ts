import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../protocol/revisions.js";
import { describeValue, joinPath } from "./config-issues.js";
import { readBackoff, readBreaker } from "./read-breaker.js";
import { readCache } from "./read-cache.js";
import { readCredentials } from "./read-credentials.js";
import { OAUTH_GRANT_KEYS, OAUTH_GRANTS, readOAuthGrants } from "./read-oauth-grants.js";
import { readOverrides } from "./read-overrides.js";
import {
  misplacedReplayKeys,
  RECORDING_SERVER_KEYS,
  readRecordOptions,
  readReplay,
} from "./read-recording.js";
import { readSandbox } from "./read-sandbox.js";
import { urlCredentials } from "./redact.js";
import type { OAuthConfig, PinPolicy, ServerConfig, ToolFilter, WorkspaceRule } from "./types.js";
import type { RawMap, ValueReader } from "./value-reader.js";

/** Defaults applied to every server. */
export const SERVER_DEFAULTS = { enabled: true, timeout: 60_000, startTimeout: 30_000, lazy: false } as const;

/** Server names: what the catalog can turn into tool-name prefixes, and a shell can type. */
export const SERVER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

const COMMON_KEYS = [
  "enabled",
  "timeout",
  "startTimeout",
  "lazy",
  "idleTimeout",
  "prefix",
  "tools",
  "transport",
  "type",
  "protocolVersion",
  "share",
  "maxSessions",
  "credentials",
  "maxUsers",
  "breaker",
  "backoff",
  ...RECORDING_SERVER_KEYS,
  "cache",
  "pin",
  "overrides",
];
const STDIO_KEYS = ["command", "args", "env", "cwd", "sandbox"];
const REMOTE_KEYS = ["url", "headers", "oauth", "fallback"];
/** The `oauth` keys that are plain text; `grant`, `redirectUrl` and `clientMetadataUrl` are checked apart. */
const OAUTH_TEXT_KEYS = [
  "clientName",
  "clientId",
  "clientSecret",
  "privateKey",
  "signingAlgorithm",
  "scope",
] as const;
const OAUTH_KEYS = ["grant", "redirectUrl", "clientMetadataUrl", ...OAUTH_TEXT_KEYS, ...OAUTH_GRANT_KEYS];
/** Where `mcplex auth login` listens for the authorization server's redirect, unless configured. */
export const DEFAULT_OAUTH_REDIRECT = "http://127.0.0.1:8421/callback";
const WORKSPACE_KEYS = ["root", "allowWrite", "rules"];
/** Every key a server may have in an mcplex file. */
export const MCPLEX_SERVER_KEYS = [...COMMON_KEYS, ...STDIO_KEYS, ...REMOTE_KEYS, ...WORKSPACE_KEYS];

const TRANSPORTS = ["stdio", "streamable-http", "http", "sse", "websocket", "workspace", "replay"] as const;

/** Where relative paths (`cwd`, `root`) are resolved from: the config file's directory. */
export interface ReadContext {
  reader: ValueReader;
  baseDir: string;
}

/** Checks a server (or profile) name, suggesting a fixed one. */
export function checkName(reader: ValueReader, name: string, path: string, what: string): boolean {
  if (SERVER_NAME.test(name)) return true;
  const fixed =
    name
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^[.-]+/, "")
      .slice(0, 64) || "server";
  reader.fail(
    path,
    `${what} name ${describeValue(name)} is not allowed; use 1-64 letters, digits, "_", "-" or "." ` +
      `(not starting with "." or "-"), e.g. "${fixed}"`,
  );
  return false;
}

/** Resolves `~/x` and relative paths against the config file's directory. */
export function resolvePath(path: string, baseDir: string): string {
  if (path === "~" || path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** The `pin:` policies, as errors list them. */
const PIN_POLICIES: readonly PinPolicy[] = ["hold-tools", "hold-server", "warn", "off"];

/** Reads a `pin:` policy (a server's, or the top-level default). */
export function readPin(reader: ValueReader, value: unknown, path: string): { pin?: PinPolicy } {
  const pin = reader.choice(value, path, PIN_POLICIES);
  return pin === undefined ? {} : { pin };
}

/** Reads `{allow: [globs], deny: [globs]}`. */
export function readToolFilter(reader: ValueReader, value: unknown, path: string): ToolFilter {
  const node = reader.map(value, path);
  if (node === undefined) return {};
  reader.knownKeys(node, path, ["allow", "deny"]);
  const filter: ToolFilter = {};
  for (const key of ["allow", "deny"] as const) {
    const globs = reader.stringList(node[key], joinPath(path, key));
    globs?.forEach((glob, i) => {
      if (glob === "")
        reader.fail(joinPath(joinPath(path, key), i), 'an empty glob matches nothing; use "*"');
    });
    if (globs !== undefined) filter[key] = globs;
  }
  return filter;
}

/** Reads one server of an mcplex file (`servers.NAME`). */
export function readMcplexServer(ctx: ReadContext, name: string, value: unknown, path: string) {
  const { reader } = ctx;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, MCPLEX_SERVER_KEYS);
  const type = node.type === undefined ? undefined : reader.string(node.type, joinPath(path, "type"));
  if (type !== undefined && type !== "workspace") {
    reader.fail(
      joinPath(path, "type"),
      `"type" only takes "workspace" in mcplex files; choose the transport with ` +
        `"transport: stdio | streamable-http | sse | websocket"`,
    );
  }
  const transport = reader.choice(node.transport, joinPath(path, "transport"), TRANSPORTS);
  // What `credentials:` may say depends on the kind of server; the kind is checked below.
  const kind =
    type === "workspace" || transport === "workspace"
      ? "workspace"
      : transport === "replay"
        ? "replay"
        : node.command !== undefined
          ? "stdio"
          : node.url !== undefined
            ? transport === "sse" || transport === "websocket"
              ? transport
              : "streamable-http"
            : undefined;
  const common = {
    name,
    enabled: reader.boolean(node.enabled, joinPath(path, "enabled")) ?? SERVER_DEFAULTS.enabled,
    timeout: reader.duration(node.timeout, joinPath(path, "timeout")) ?? SERVER_DEFAULTS.timeout,
    startTimeout:
      reader.duration(node.startTimeout, joinPath(path, "startTimeout")) ?? SERVER_DEFAULTS.startTimeout,
    lazy: reader.boolean(node.lazy, joinPath(path, "lazy")) ?? SERVER_DEFAULTS.lazy,
    ...readIdleTimeout(reader, node.idleTimeout, joinPath(path, "idleTimeout")),
    tools: readToolFilter(reader, node.tools, joinPath(path, "tools")),
    ...readPrefix(reader, node.prefix, joinPath(path, "prefix")),
    ...readProtocolVersion(reader, node.protocolVersion, joinPath(path, "protocolVersion")),
    ...readSharing(reader, node, path),
    ...readCredentials(reader, node, path, kind),
    ...readBreaker(reader, node.breaker, joinPath(path, "breaker")),
    ...readBackoff(reader, node.backoff, joinPath(path, "backoff")),
    ...readRecordOptions(reader, node, path, (p) => resolvePath(p, ctx.baseDir)),
    ...readCache(reader, node.cache, joinPath(path, "cache")),
    ...readPin(reader, node.pin, joinPath(path, "pin")),
    ...readOverrides(reader, node.overrides, joinPath(path, "overrides")),
  };
  if (transport === "replay") {
    for (const key of [...STDIO_KEYS, ...REMOTE_KEYS, ...WORKSPACE_KEYS])
      if (node[key] !== undefined) reader.fail(joinPath(path, key), "does not apply to replay servers");
    const replay = readReplay(reader, node, path, (p) => resolvePath(p, ctx.baseDir));
    return replay && ({ ...common, ...replay } satisfies ServerConfig);
  }
  misplacedReplayKeys(reader, node, path);
  const present = (keys: string[]) => keys.filter((k) => node[k] !== undefined);
  const misplaced = (keys: string[], kind: string) => {
    for (const key of present(keys)) reader.fail(joinPath(path, key), `does not apply to ${kind} servers`);
  };
  if (type === "workspace" || transport === "workspace") {
    misplaced([...STDIO_KEYS, ...REMOTE_KEYS], "workspace");
    return { ...common, ...readWorkspace(ctx, node, path) } satisfies ServerConfig;
  }
  misplaced(WORKSPACE_KEYS, 'non-workspace (add "type: workspace")');
  const hasCommand = node.command !== undefined;
  const hasUrl = node.url !== undefined;
  if (hasCommand && hasUrl) {
    return reader.fail(path, 'has both "command" and "url"; keep "command" for stdio or "url" for remote');
  }
  if (!hasCommand && !hasUrl) {
    return reader.fail(path, 'needs either "command" (stdio) or "url" (http, sse, websocket)');
  }
  if (hasCommand) {
    misplaced(REMOTE_KEYS, "stdio");
    if (transport !== undefined && transport !== "stdio") {
      return reader.fail(
        joinPath(path, "transport"),
        `is "${transport}" but "command" means stdio; add a "url"`,
      );
    }
    const stdio = readStdio(ctx, node, path);
    return stdio && ({ ...common, ...stdio } satisfies ServerConfig);
  }
  misplaced(STDIO_KEYS, "remote (url)");
  if (transport === "stdio")
    return reader.fail(joinPath(path, "transport"), 'is "stdio" but needs a "command"');
  const remote = readRemote(ctx, node, path, transport === "http" ? "streamable-http" : transport, false);
  const fallback =
    remote && readFallback(reader, node.fallback, joinPath(path, "fallback"), remote.transport);
  return remote && ({ ...common, ...remote, ...(fallback && { fallback }) } satisfies ServerConfig);
}

/** `share: false` (one connection per client session) and its cap, `maxSessions`. */
function readSharing(
  reader: ValueReader,
  node: RawMap,
  path: string,
): { share?: false; maxSessions?: number } {
  const share = reader.boolean(node.share, joinPath(path, "share"));
  const maxSessions = reader.count(node.maxSessions, joinPath(path, "maxSessions"));
  if (maxSessions !== undefined && share !== false) {
    reader.fail(
      joinPath(path, "maxSessions"),
      'caps the connections of "share: false"; add "share: false" or remove it',
    );
  }
  if (share !== false) return {};
  return maxSessions === undefined ? { share } : { share, maxSessions };
}

function readPrefix(reader: ValueReader, value: unknown, path: string): { prefix?: string } {
  const prefix = reader.string(value, path);
  if (prefix === undefined) return {};
  if (!/^[A-Za-z0-9_.-]{0,64}$/.test(prefix)) {
    reader.fail(
      path,
      `${describeValue(prefix)} may only hold letters, digits, "_", "-", "." (or "" for none)`,
    );
  }
  return { prefix };
}

function readProtocolVersion(
  reader: ValueReader,
  value: unknown,
  path: string,
): { protocolVersion?: string } {
  const version = reader.string(value, path);
  if (version === undefined) return {};
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) {
    reader.fail(path, `${describeValue(version)} is not a protocol revision; write it like "2025-11-25"`);
  } else if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    reader.fail(
      path,
      `mcplex does not speak protocol revision ${version}; pin one of ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}, or remove protocolVersion to negotiate`,
    );
  }
  return { protocolVersion: version };
}

/** Reads `command`, `args`, `env` and `cwd` of a stdio server. */
export function readStdio(ctx: ReadContext, node: RawMap, path: string) {
  const { reader } = ctx;
  const command = reader.nonEmpty(node.command, joinPath(path, "command"));
  const args = reader.stringList(node.args, joinPath(path, "args")) ?? [];
  const env = reader.stringMap(node.env, joinPath(path, "env")) ?? {};
  const cwd = reader.nonEmpty(node.cwd, joinPath(path, "cwd"));
  const sandbox = readSandbox(reader, node.sandbox, joinPath(path, "sandbox"), (p) =>
    resolveReadPath(ctx, p),
  );
  if (command === undefined) return undefined;
  return {
    transport: "stdio" as const,
    command,
    args,
    env,
    ...(cwd === undefined ? {} : { cwd: resolveReadPath(ctx, cwd) }),
    ...(sandbox === undefined ? {} : { sandbox }),
    ...(sandbox ? { configDir: ctx.baseDir } : {}),
  };
}

/** {@link resolvePath} of a path read by `ctx.reader`, which may stand for a kept `${...}` reference. */
export function resolveReadPath(ctx: ReadContext, path: string): string {
  const value = ctx.reader.probe(path);
  if (value !== path && resolvePath(value, ctx.baseDir) === value) return path;
  return resolvePath(path, ctx.baseDir);
}

/**
 * Reads `url` (or `urlKey`) and `headers` of a remote server; `explicit` is the transport the
 * config names, else it is inferred from the scheme (and an `/sse` path when `guessSse`).
 */
export function readRemote(
  ctx: ReadContext,
  node: RawMap,
  path: string,
  explicit: "streamable-http" | "sse" | "websocket" | undefined,
  guessSse: boolean,
  urlKey = "url",
) {
  const { reader } = ctx;
  const urlPath = joinPath(path, urlKey);
  const url = reader.nonEmpty(node[urlKey], urlPath);
  const headers = reader.stringMap(node.headers, joinPath(path, "headers")) ?? {};
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(reader.probe(url));
  } catch {
    // A kept reference to a variable not set here (config convert): the transport named is enough.
    if (reader.probe(url) !== url) {
      if (explicit !== undefined) return { transport: explicit, url, headers };
      return reader.fail(
        urlPath,
        `${describeValue(url)} is not a URL with the variables set here; set them, or name the transport`,
      );
    }
    return reader.fail(urlPath, `${describeValue(url)} is not a URL; write it like "https://host/mcp"`);
  }
  for (const credential of urlCredentials(url)) reader.secrets.add(credential);
  const web = parsed.protocol === "http:" || parsed.protocol === "https:";
  const socket = parsed.protocol === "ws:" || parsed.protocol === "wss:";
  if (!web && !socket) {
    return reader.fail(urlPath, `scheme "${parsed.protocol}" is not supported; use http(s):// or ws(s)://`);
  }
  // Clients that accept bare `url` entries fall back to SSE for legacy servers; an
  // endpoint ending in /sse is one of those.
  const inferred = socket
    ? "websocket"
    : guessSse && /\/sse\/?$/.test(parsed.pathname)
      ? "sse"
      : "streamable-http";
  const transport = explicit ?? inferred;
  if ((transport === "websocket") !== socket) {
    const want = transport === "websocket" ? "ws:// or wss://" : "http:// or https://";
    return reader.fail(urlPath, `transport "${transport}" needs a ${want} URL`);
  }
  const oauth = readOAuth(ctx, node.oauth, joinPath(path, "oauth"));
  if (oauth !== undefined && transport === "websocket") {
    return reader.fail(
      joinPath(path, "oauth"),
      "OAuth is for http(s) servers; give a WebSocket server headers",
    );
  }
  return { transport, url, headers, ...(oauth === undefined ? {} : { oauth }) };
}

function readIdleTimeout(reader: ValueReader, value: unknown, path: string): { idleTimeout?: number } {
  const idleTimeout = reader.duration(value, path);
  return idleTimeout === undefined ? {} : { idleTimeout };
}

/** `fallback: http | none`, for WebSocket servers: what a refused upgrade leads to. */
function readFallback(
  reader: ValueReader,
  value: unknown,
  path: string,
  transport: string,
): "http" | "none" | undefined {
  if (value === undefined) return undefined;
  const fallback = reader.string(value, path);
  if (fallback === undefined) return undefined;
  if (transport !== "websocket") {
    return reader.fail(path, `only applies to WebSocket (ws://, wss://) servers; this one is ${transport}`);
  }
  if (fallback !== "http" && fallback !== "none") {
    return reader.fail(
      path,
      `${describeValue(fallback)} is not a fallback; use "http" (the default) or "none"`,
    );
  }
  return fallback;
}

/** `oauth: true`, or a map of {@link OAUTH_KEYS}. */
function readOAuth(ctx: ReadContext, value: unknown, path: string): OAuthConfig | undefined {
  const { reader } = ctx;
  if (value === undefined || value === false) return undefined;
  const defaults: OAuthConfig = {
    grant: "authorization_code",
    redirectUrl: DEFAULT_OAUTH_REDIRECT,
    clientName: "mcplex",
  };
  if (value === true) return defaults;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, OAUTH_KEYS);
  const text = (key: string) => reader.nonEmpty(node[key], joinPath(path, key));
  const oauth: OAuthConfig = { ...defaults };
  for (const key of ["redirectUrl", "clientMetadataUrl"] as const) {
    const url = text(key);
    if (url === undefined) continue;
    if (!URL.canParse(url)) reader.fail(joinPath(path, key), `${describeValue(url)} is not a URL`);
    else oauth[key] = url;
  }
  for (const key of OAUTH_TEXT_KEYS) {
    const given = text(key);
    if (given !== undefined) oauth[key] = given;
  }
  for (const secret of [oauth.clientSecret, oauth.privateKey])
    if (secret !== undefined) reader.markSecret(secret);
  const grant = text("grant");
  const known = OAUTH_GRANTS.find((g) => g === grant);
  if (known !== undefined) oauth.grant = known;
  else if (grant !== undefined) {
    reader.fail(
      joinPath(path, "grant"),
      `${describeValue(grant)} is not a grant; use ${OAUTH_GRANTS.slice(0, -1).join(", ")} or ${OAUTH_GRANTS.at(-1)}`,
    );
  }
  readOAuthGrants(reader, node, path, oauth, (file) => resolveReadPath(ctx, file));
  if (oauth.clientId === undefined && (oauth.clientSecret !== undefined || oauth.privateKey !== undefined)) {
    reader.fail(path, "a client secret or private key needs its clientId");
  }
  if (
    oauth.grant === "client_credentials" &&
    (oauth.clientId === undefined || (oauth.clientSecret ?? oauth.privateKey) === undefined)
  ) {
    reader.fail(path, "client_credentials needs clientId and either clientSecret or privateKey");
  }
  return oauth;
}

function readWorkspace(ctx: ReadContext, node: RawMap, path: string) {
  const { reader } = ctx;
  const root = reader.nonEmpty(node.root, joinPath(path, "root")) ?? ".";
  const allowWrite = reader.boolean(node.allowWrite, joinPath(path, "allowWrite")) ?? false;
  const rules: WorkspaceRule[] = [];
  const rulesPath = joinPath(path, "rules");
  if (node.rules !== undefined && !Array.isArray(node.rules)) {
    reader.fail(rulesPath, `must be a list of {pattern, ops}, not ${describeValue(node.rules)}`);
  }
  (Array.isArray(node.rules) ? node.rules : []).forEach((item, i) => {
    const rulePath = joinPath(rulesPath, i);
    const rule = reader.map(item, rulePath);
    if (rule === undefined) return;
    reader.knownKeys(rule, rulePath, ["pattern", "ops"]);
    const pattern = reader.nonEmpty(rule.pattern, joinPath(rulePath, "pattern"));
    if (rule.pattern === undefined) reader.fail(rulePath, 'needs a "pattern" glob such as "src/**"');
    const ops = (reader.stringList(rule.ops, joinPath(rulePath, "ops")) ?? []).filter((op, j) => {
      if (op === "read" || op === "write") return true;
      reader.fail(
        joinPath(joinPath(rulePath, "ops"), j),
        `${describeValue(op)} is not an op; use "read" or "write"`,
      );
      return false;
    }) as WorkspaceRule["ops"];
    if (rule.ops === undefined) reader.fail(rulePath, 'needs "ops": [read] or [read, write] (or [] to deny)');
    if (pattern !== undefined) rules.push({ pattern, ops });
  });
  return { transport: "workspace" as const, root: resolveReadPath(ctx, root), allowWrite, rules };
}
