/**
 * The shape of a loaded, validated and expanded mcplex config.
 * Every format (mcplex.yaml/json, Claude Desktop / Cursor `mcpServers`, VS Code `servers`, and
 * the shapes applications keep: `mcp.client.servers`, a bare server map, `mcp_servers`)
 * is normalised into this one shape by the loader.
 */

export type {
  CredentialsConfig,
  IdJagConfig,
  IdJagCredentialsConfig,
  OAuthConfig,
  TokenExchangeConfig,
  TokenSource,
  UsersConfig,
} from "./credential-types.js";
export type {
  ArgumentOverride,
  CompositeToolConfig,
  GuardrailConfig,
  GuardrailKind,
  PiiKind,
  PolicyEffect,
  PolicyRuleConfig,
  QuotaConfig,
  ToolOverrideConfig,
} from "./rule-types.js";

import type { CredentialsConfig, OAuthConfig, UsersConfig } from "./credential-types.js";
import type {
  CompositeToolConfig,
  GuardrailConfig,
  PolicyRuleConfig,
  QuotaConfig,
  ToolOverrideConfig,
} from "./rule-types.js";

/** How a client sees the tools: every tool, a few meta-tools to search them, or a code sandbox. */
export type CatalogMode = "all" | "search" | "code";

/** Transports an upstream can be reached over. */
export type TransportKind =
  | "stdio"
  | "streamable-http"
  | "sse"
  | "websocket"
  | "workspace"
  | "local"
  | "replay";

/** Allow/deny glob lists; deny wins over allow; an absent allow list allows everything. */
export interface ToolFilter {
  allow?: string[];
  deny?: string[];
}

interface ServerCommon {
  /** The server's name as written in the config; also the default name prefix. */
  name: string;
  /** `false` keeps the server in the config without starting it. Default `true`. */
  enabled: boolean;
  /** Per-request timeout in milliseconds. Default 60 000. */
  timeout: number;
  /** Start timeout (connect + handshake + first listings) in milliseconds. Default 30 000. */
  startTimeout: number;
  /** Start on first use instead of at hub start. Default `false`. */
  lazy: boolean;
  /**
   * Stop the server after this many milliseconds without a call; its tools stay listed and the
   * next call starts it again. Default: never.
   */
  idleTimeout?: number;
  /**
   * Name prefix for exposed tools and prompts. `undefined` means the server name;
   * `""` means no prefix (names pass through as they are, made LLM-safe).
   */
  prefix?: string;
  tools: ToolFilter;
  /** Pin one protocol revision (e.g. `"2025-11-25"`) instead of negotiating. */
  protocolVersion?: string;
  /**
   * `false`: every client session of a gateway gets a connection of its own (started on its first
   * call, closed with the session), for servers that keep per-connection state such as the roots
   * they were given. Default: one connection shared by every client.
   */
  share?: false;
  /** With `share: false`, at most this many client sessions hold a connection at once. Default 16. */
  maxSessions?: number;
  /**
   * Whose credentials a signed-in user's calls use (`credentials:`). Default `shared`: the
   * config's, for everyone. `per-user`: a remote server is called with the user's own OAuth
   * tokens (connected once at `/connect/<server>`); a stdio server runs one process per user,
   * its `${user:NAME}` values the user's own. `{ exchange }`: the user's token exchanged (RFC
   * 8693) for one this server accepts. `{ idJag }`: enterprise-managed authorization, the user's
   * token exchanged for an ID-JAG redeemed at the server's authorization server. Only signed-in
   * (OAuth) callers may call a server that is not `shared`.
   */
  credentials?: CredentialsConfig;
  /**
   * With `credentials` other than `shared`: at most this many users hold a connection (a
   * process, for stdio) of this server at once. Default 16.
   */
  maxUsers?: number;
  /** When reconnecting gives way to a long pause; defaults in `Upstream`. */
  breaker?: BreakerConfig;
  /** Delays between reconnect attempts; defaults in `Backoff`. */
  backoff?: BackoffConfig;
  /** Write this server's traffic to a recording (`record:`, or `mcplex serve --record DIR`). */
  record?: RecordConfig;
  /** Serve its recording, or a simulator made from its cached tool list, instead of the server. */
  simulate?: boolean;
  /** Reuse results of this server's read-only tools for a while (see {@link CacheConfig}). */
  cache?: CacheConfig;
  /**
   * Pin its tools against silent change (`pin:`, or the top-level `pin:` default): `hold-tools`
   * keeps changed and new tools out of the catalog until `mcplex trust`, `hold-server` all its
   * tools, `warn` only reports. Absent or `off`: not pinned.
   */
  pin?: PinPolicy;
  /**
   * How its tools are shown and called (`overrides:`), by glob over the server's own tool
   * names, applied in order: rename, title, description, annotations, fixed or default arguments.
   */
  overrides?: Record<string, ToolOverrideConfig>;
}

/** What a changed tool list of a pinned server does (see `ServerConfig.pin`). */
export type PinPolicy = "hold-tools" | "hold-server" | "warn" | "off";

/** `record:` of a server: where its traffic goes and what never reaches the disk. */
export interface RecordConfig {
  /** The directory of `SERVER.jsonl` (and its rotated parts). */
  dir: string;
  /** Keys of params and results (any depth, any case) whose values are written as `[redacted]`. */
  redact: string[];
  /** Rotate the file past this many bytes. Default 10 MiB. */
  maxBytes?: number;
  /** Rotated files kept. Default 5. */
  maxFiles?: number;
}

/**
 * Result caching of one server's tools. Only tools the server annotates `readOnlyHint: true`
 * are cached, unless the config vouches for one with `readOnly: true`; a tool annotated
 * `destructiveHint: true` never is. A result is reused only for the same arguments and the same
 * caller (token and profile), and never an error.
 */
export interface CacheConfig {
  /** How long a result is reused, in milliseconds. */
  ttl: number;
  /** By glob over the server's own tool names: another `ttl`, `readOnly`, or `false` (never cached). */
  tools?: Record<string, ToolCacheConfig | false>;
}

/** The cache settings of the tools one `cache.tools` glob matches. */
export interface ToolCacheConfig {
  ttl?: number;
  /** Cache this tool although the server does not annotate it `readOnlyHint: true`. */
  readOnly?: boolean;
}

/**
 * The circuit breaker of a server that keeps failing: after `failures` failures in a row
 * (failed starts, or connections that ended before serving a call or lasting
 * `backoff.healthyAfter`), the next attempt waits `openFor` ms.
 */
export interface BreakerConfig {
  /** Default 8. */
  failures?: number;
  /** Milliseconds. Default 300 000 (5 minutes). */
  openFor?: number;
}

/** Reconnect delays in milliseconds: doubling from `initial` up to `max`, with jitter. */
export interface BackoffConfig {
  /** Default 1000. */
  initial?: number;
  /** Default 30 000. */
  max?: number;
  /** Connected this long counts as healthy even without a call served. Default 60 000. */
  healthyAfter?: number;
}

export interface StdioServerConfig extends ServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /**
   * Run the server inside bubblewrap (Linux): `false` when the config turns the top-level
   * default off for this server, absent when neither asks for a sandbox.
   */
  sandbox?: SandboxConfig | false;
  /**
   * The folder of the config that defines a sandboxed server (set with `sandbox`): the sandbox
   * keeps it out of sight (mcplex.yaml, its lock file, .env, audit.log) unless `sandbox.fs` lists it.
   */
  configDir?: string;
}

/**
 * What a sandboxed stdio server may touch (`sandbox:` per server or at the top level). The
 * system directories, the server's own package and a private `/tmp` are always there.
 */
export interface SandboxConfig {
  /** Absolute paths the server may read (`read`) or read and write (`write`); the rest is invisible. */
  fs: { read: string[]; write: string[] };
  /** `none`: no network at all; `all`: the host's; a list: only these hosts, through mcplex's proxy. */
  network: "none" | "all" | string[];
  /** Largest data segment (RLIMIT_DATA), in bytes. */
  memory: number;
  /** Most processes and threads at once. */
  processes: number;
  /** Most open files (RLIMIT_NOFILE). */
  files: number;
}

export interface RemoteServerConfig extends ServerCommon {
  transport: "streamable-http" | "sse" | "websocket";
  url: string;
  headers: Record<string, string>;
  /** Authorize with OAuth 2.1 when the server asks (401/403); HTTP transports only. */
  oauth?: OAuthConfig;
  /**
   * WebSocket servers only: what to do when the upgrade is refused (a 4xx/5xx answer) or reset.
   * `http` (default): use Streamable HTTP at the same host and path; `none`: fail.
   */
  fallback?: "http" | "none";
}

/** Glob rule of the built-in workspace server. First match wins. */
export interface WorkspaceRule {
  pattern: string;
  ops: Array<"read" | "write">;
}

export interface WorkspaceServerConfig extends ServerCommon {
  transport: "workspace";
  root: string;
  allowWrite: boolean;
  rules: WorkspaceRule[];
}

/**
 * A server in this process (library use only, not in config files): for example
 * `LocalServer`, application functions served as tools.
 */
export interface LocalServerConfig extends ServerCommon {
  transport: "local";
  /** Opens a connection to the server; an SDK `Transport`. */
  server: { connect(): import("@modelcontextprotocol/client").Transport };
}

/**
 * A recording served as if it were the server (`transport: replay`), or, when `mcplex serve
 * --simulate` finds no recording, a simulator built from the server's cached tool list.
 */
export interface ReplayServerConfig extends ServerCommon {
  transport: "replay";
  /** Recording files, the oldest first (a rotated recording has several). */
  recording: string[];
  /** `sequential`: answers in recorded order per request; `match`: the first recorded answer, any order. */
  mode: "sequential" | "match";
  /** Recorded time is divided by this; 0 answers as fast as possible. Default 1. */
  speed: number;
  /** Instead of a recording: the tools a simulator answers for, and its seed. */
  simulator?: {
    tools: Record<string, unknown>[];
    seed: number;
    serverInfo?: { name: string; version: string };
  };
}

export type ServerConfig =
  | StdioServerConfig
  | RemoteServerConfig
  | WorkspaceServerConfig
  | LocalServerConfig
  | ReplayServerConfig;

/**
 * Per-agent view of the catalog. A profile reaches a server (its tools, resources, templates and
 * prompts) when the server is in `servers`, or, without `servers`, when one of its tools passes a
 * `tools.allow` list; with neither, every server. `resources` and `prompts` narrow that further.
 */
export interface ProfileConfig {
  /** Servers visible to this profile; absent means those its tool globs select. */
  servers?: string[];
  /** Globs over exposed tool names (`github__*`). */
  tools: ToolFilter;
  /** Globs over the servers' own resource URIs and template texts (`file:///docs/*`). */
  resources?: ToolFilter;
  /** Globs over exposed prompt names (`github__*`). */
  prompts?: ToolFilter;
  /** How this profile's clients see the tools: `all`, `search` or `code` (see README, Catalog modes). */
  mode?: CatalogMode;
  /** Exposed tool names (globs) listed as themselves beside the meta-tools of `search` and `code` mode. */
  pin?: string[];
  /** Tool overrides over the servers' (see {@link ToolOverrideConfig}), by glob over exposed names. */
  overrides?: Record<string, ToolOverrideConfig>;
}

/** Bearer token bound to a profile (used by the gateway). */
export interface TokenConfig {
  token: string;
  profile?: string;
  /**
   * May read the operator endpoints (`/metrics`, `/readyz`) although bound to a profile. A token
   * bound to no profile may anyway.
   */
  operator?: boolean;
  /** How clients with this token see the tools, over the profile's and the front's mode. */
  mode?: CatalogMode;
}

/** OpenAI-compatible chat endpoint used by the agent loop. */
export interface LlmConfig {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  provider?: string;
}

/** The `serve:` block: settings of `mcplex serve`. */
export interface ServeConfig {
  /**
   * How long a client's first requests wait for servers still starting (ms): past it, they are
   * answered with the servers ready then, and the others are announced as they become ready.
   */
  readyWait?: number;
  /** How clients see the tools unless their token, front or profile says otherwise. Default `all`. */
  mode?: CatalogMode;
  /** Tools (globs over exposed names) listed as themselves beside the meta-tools. */
  pin?: string[];
  /** Bounds of the result cache shared by every server's `cache`. */
  cache?: { maxEntries?: number; maxBytes?: number };
  /**
   * Limits of each `run_code` run in `code` mode (`timeout` in the file is `wallMs` here,
   * `queueTimeout` is `queueMs`: the longest wait for a sandbox worker; `maxQueued`: runs of one
   * client waiting at once).
   */
  code?: {
    wallMs?: number;
    memoryBytes?: number;
    maxToolCalls?: number;
    maxParallelCalls?: number;
    maxOutputBytes?: number;
    queueMs?: number;
    maxQueued?: number;
  };
  /** Offer the `connect_server` / `disconnect_server` tools over the `available:` servers. Default false. */
  serverTools?: boolean;
  /**
   * Origins of web pages, besides the gateway's own, that may call it over HTTP
   * (`https://app.example.com`), compared exactly: scheme, host and port. As browsers write them.
   */
  allowedOrigins?: string[];
  /**
   * Time (ms) an HTTP connection has to send a complete request head, from its opening; past
   * it, it is closed (`--idle-timeout`). Default 30 000.
   */
  idleTimeout?: number;
  /** Open HTTP connections in all (`--max-connections`). Default 10 000, fewer with few file descriptors. */
  maxConnections?: number;
  /** Open HTTP connections per client address (`--max-connections-per-client`). Default 2 000. */
  maxConnectionsPerClient?: number;
  /**
   * Bytes that may wait in the gateway, all HTTP clients and fronts together: request bodies
   * and their answers (`--memory-budget`). Default 32 MiB.
   */
  memoryBudget?: number;
  /**
   * Serve the Server Card (`/mcp/server-card`) and the AI Catalog (`/.well-known/ai-catalog.json`)
   * of the MCP draft SEP-2127. Default true.
   */
  cards?: boolean;
}

/**
 * The `telemetry:` block: OpenTelemetry traces and metrics over OTLP/HTTP. Off unless
 * `enabled: true` or the standard `OTEL_*` variables name an endpoint.
 */
export interface TelemetryConfig {
  enabled?: boolean;
  /** The OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are added), e.g. `http://localhost:4318`. */
  endpoint?: string;
  /** `service.name` of the spans and metrics. Default `mcplex`. */
  serviceName?: string;
  /** Put tool arguments and results on the spans (they may hold what users typed). Default false. */
  captureContent?: boolean;
  /** Fraction of new traces recorded, 0 to 1 (a client's sampled trace is always followed). Default 1. */
  sampleRatio?: number;
  /** Extra headers of the OTLP requests (an API key). Their values are redacted like secrets. */
  headers?: Record<string, string>;
}

/**
 * The `cluster:` block: this process is one of several replicas behind a load balancer, sharing
 * what they must through Redis (see README "Running several replicas").
 */
export interface ClusterConfig {
  /** The Redis URL, e.g. `redis://redis:6379` (`--cluster` on `mcplex serve`). */
  url?: string;
  /** Where the other replicas reach this one, e.g. `http://10.0.0.5:8420` (default: the bound address). */
  advertise?: string;
  /** The cluster secret: signs session ids and request states, and authenticates replica-to-replica requests. */
  secret?: string;
  /** This replica's id (letters, digits, `-`, `_`). Default: random per start. */
  id?: string;
}

/**
 * The `audit:` block: one JSON line per call, resource read and prompt get, with who made it and
 * how it ended (see README "Audit trail"). Read at start; `--audit` on `mcplex serve` overrides `to`.
 */
export interface AuditConfig {
  /** `stderr`, or the audit file's absolute path (written relative to the config file). */
  to: string;
  /** A file is rotated before a line would take it past this many bytes. Default 10 MiB. */
  maxSize: number;
  /** Rotated files kept (`audit.log.1` ... `audit.log.<keep>`). Default 5. */
  keep: number;
  /** Most bytes of one line; longer fields are cut to their length, SHA-256 and head. Default 64 KiB. */
  maxLine?: number;
  /** A rotation that drops lines younger than this (ms) warns (`audit-recent-lines-dropped`). Default 24 h. */
  keepFor?: number;
  /** Add each call's arguments and its result (or error), redacted like every log. Default false. */
  content: boolean;
}

/**
 * The `auth:` block: the gateway as an OAuth 2.1 resource server (README "Sign-in"). Clients
 * sign their users in at one of `issuers` and present the access token; its claims decide the
 * user's profile (`access`) and the scopes a call needs (`require`). Static `tokens:` keep
 * working beside it.
 */
export interface AuthConfig {
  /**
   * The URL clients reach this gateway at, without the endpoint path (`https://mcp.example.com`,
   * or with the path prefix a proxy adds). Each endpoint is a resource of its own
   * (`<resource>/mcp`, `/sse`, `/ws`), the audience a token must name. Required off loopback;
   * on loopback, default: the address the gateway is bound to and `localhost` on its port
   * (`http://127.0.0.1:8420`, `http://localhost:8420`), never the request's Host.
   */
  resource?: string;
  /** `aud` values accepted besides the resource's URLs (an IdP that names APIs otherwise). */
  audience?: string[];
  /** The authorization servers whose tokens are accepted. At least one. */
  issuers: AuthIssuerConfig[];
  /**
   * Scopes every signed-in call needs: asked for in the 401 challenge and listed in the
   * protected-resource metadata, with those of `require`. Default none.
   */
  scopes: string[];
  /** Leeway for `exp` and `nbf` (ms). Default 30 s. */
  clockTolerance: number;
  /**
   * The least time between two fetches of an issuer's JWKS (ms): a token with an unknown `kid`
   * fetches the keys again at most once per this interval. Default 60 s.
   */
  jwksCooldown: number;
  /** Where the claims the rules read are found, as dotted paths (`realm_access.roles`). */
  claims: { groups: string; email: string; emailVerified: string };
  /**
   * Who gets what, first match wins. Absent: every signed-in user gets the front's default
   * profile (and no operator rights). Present: a user no rule matches is refused (403).
   */
  access?: AccessRuleConfig[];
  /** The scopes calls need, per tool, resource, prompt or server (step-up: 403 insufficient_scope). */
  require: ScopeRuleConfig[];
  /** How the web dashboard signs its user in (see {@link DashboardSignInConfig}); default: as below. */
  dashboard?: DashboardSignInConfig;
  /** DPoP-bound tokens (RFC 9449, see {@link DpopConfig}); absent: accepted with valid proofs, not required. */
  dpop?: DpopConfig;
}

/**
 * `auth.dpop`: access tokens bound to a client's key (RFC 9449, SEP-1932). A bound token
 * (`cnf.jkt`) is accepted only as `Authorization: DPoP <token>` with a valid `DPoP` proof,
 * never as a plain bearer, whether or not this block is given.
 */
export interface DpopConfig {
  /** Every token must be DPoP-bound: plain bearer tokens are refused. Default false. */
  required: boolean;
  /** Proofs must carry a nonce the gateway issued (`DPoP-Nonce`, RFC 9449 §9). Default false. */
  nonce: boolean;
  /** The proof signature algorithms accepted (asymmetric only). Default the SDK's list. */
  algorithms: string[];
  /** How long after its `iat` a proof is accepted (ms), and its `jti` remembered. Default 5 min. */
  window: number;
}

/**
 * `auth.dashboard`: the client the dashboard page signs in with, from the browser (authorization
 * code with PKCE S256, `resource` = the gateway). Every key is optional.
 */
export interface DashboardSignInConfig {
  /** Which of `auth.issuers` the page signs in at. Default: the first. */
  issuer?: string;
  /**
   * A public client registered for the page at that issuer (no secret; redirect URI
   * `<resource>/dashboard`). Default: the page registers one itself (RFC 7591), where the
   * provider lets a browser do so.
   */
  clientId?: string;
  /** Scopes the page asks for. Default: `auth.scopes` (what the gateway's challenge names). */
  scopes?: string[];
}

/** One entry of `auth.issuers`: an authorization server. */
export interface AuthIssuerConfig {
  /** Its issuer identifier, exactly as the tokens' `iss` says (`https://login.example.com/realms/team`). */
  issuer: string;
  /** Where its signing keys are; default: `jwks_uri` of its metadata (RFC 8414, then OpenID discovery). */
  jwksUri?: string;
  /** Signature algorithms accepted. Default: RS256-512, PS256-512, ES256-512, EdDSA (never `none` or HS*). */
  algorithms: string[];
  /**
   * For opaque (non-JWT) tokens: RFC 7662 introspection with this client's credentials. With
   * several issuers that introspect, all but one give `prefix`: the opaque tokens that start
   * with it are this issuer's, and only this issuer is asked about them; the one without takes
   * the opaque tokens no prefix claims.
   */
  introspection?: { endpoint?: string; clientId: string; clientSecret?: string; prefix?: string };
}

/** One entry of `auth.access`: users whose claims match `when` get `profile` (and `operator`, `mode`). */
export interface AccessRuleConfig {
  /**
   * All given conditions must hold; a list matches any of its entries (globs for `sub`, `email`;
   * README "Sign-in" says how each matches). `issuer`: the issuers (`auth.issuers`) whose tokens
   * the rule is for, required when there are several. `client`: the rule is for machine callers
   * (tokens without `sub`) of these `client_id`s, and matches no user; a rule without it matches
   * users only. `unverifiedEmail`: `email` matches even when the issuer has not verified it.
   */
  when: {
    issuer?: string[];
    client?: string[];
    sub?: string[];
    email?: string[];
    unverifiedEmail?: boolean;
    groups?: string[];
    scope?: string[];
  };
  /** The profile they see; absent: the front's default (everything). */
  profile?: string;
  /** May read `/metrics` and `/readyz` and act on servers in the dashboard. Default false. */
  operator?: boolean;
  /** How they see the tools, over their profile's mode. */
  mode?: CatalogMode;
}

/** One entry of `auth.require`: what the matching calls need. At least one selector. */
export interface ScopeRuleConfig {
  /** Globs over exposed tool names (`github__*`). */
  tools?: string[];
  /** Globs over resource URIs. */
  resources?: string[];
  /** Globs over exposed prompt names. */
  prompts?: string[];
  /** Server names: every tool, resource and prompt of theirs. */
  servers?: string[];
  /** Scopes the token must all carry. */
  scopes: string[];
}

export interface McplexConfig {
  /** Where the config came from: a file path, or `"<default>"` for the embedded default. */
  source: string;
  /** Which dialect the file was written in. */
  format:
    | "mcplex"
    | "mcpServers"
    | "vscode"
    | "mcp-client-servers"
    | "server-map"
    | "mcp_servers"
    | "default";
  servers: ServerConfig[];
  /** The `pin:` policy of servers that name none (already applied to each of them). */
  pin?: PinPolicy;
  /**
   * Servers a file turned off all at once (`mcp.client.enabled: false`, the switch at `path`):
   * checked as written, named here, and not in `servers`. Profiles may name them; `config check`
   * reports the switch.
   */
  disabledBlock?: { path: string; servers: string[] };
  /**
   * Servers the user approved but that are not started with the hub (`available:`, same shape
   * as `servers:`): `hub.connectServer(name)` starts one, `hub.disconnectServer(name)` stops it.
   */
  available?: ServerConfig[];
  profiles: Record<string, ProfileConfig>;
  tokens: TokenConfig[];
  llm?: LlmConfig;
  /** Settings of `mcplex serve` (flags override them). */
  serve?: ServeConfig;
  /** OpenTelemetry export (off by default). */
  telemetry?: TelemetryConfig;
  /** Several replicas sharing state through Redis (off by default). */
  cluster?: ClusterConfig;
  /** The audit trail of `mcplex serve` (off by default). */
  audit?: AuditConfig;
  /** Modules of interceptors that every call goes through (see {@link InterceptorModuleConfig}). */
  interceptors?: InterceptorModuleConfig[];
  /** Rules in CEL that decide each request (see {@link PolicyRuleConfig}); none by default. */
  policies?: PolicyRuleConfig[];
  /** Built-in checks and rewrites of tool calls and results (see {@link GuardrailConfig}); none by default. */
  guardrails?: GuardrailConfig[];
  /** Rate limits and quotas of tool calls (see {@link QuotaConfig}); none by default. */
  quotas?: QuotaConfig[];
  /** Tools made of a script over other tools (see {@link CompositeToolConfig}), by name; none by default. */
  composites?: Record<string, CompositeToolConfig>;
  /** OAuth sign-in: the gateway as a resource server (off unless present). */
  auth?: AuthConfig;
  /** Bounds of per-user servers' connections (see {@link UsersConfig}); defaults when absent. */
  users?: UsersConfig;
  /**
   * Values that came from `${secret:...}` references (and `apiKey`/token fields);
   * used to redact them from every log line and error message.
   */
  secrets: string[];
}

/**
 * One entry of `interceptors:`: a JavaScript module whose default export is an interceptor
 * (`next => async request => result`), loaded by `mcplex serve`, `call` and `chat` at start.
 * `at: call` (the default) puts it on the path of every call, whoever makes it; `at: upstream`
 * around each request sent to a server.
 */
export interface InterceptorModuleConfig {
  /** Absolute path of the module (written relative to the config file). */
  module: string;
  at: "call" | "upstream";
}
