/**
 * Local (library-side) errors. Every error mcplex throws is an {@link McplexError}
 * with a stable `code`, structured fields and, where it wraps something, a `cause`.
 * Wire errors (JSON-RPC code + message) are {@link RpcError} and stay apart.
 */

/**
 * Every local error code with what it means: the one list of codes. {@link McplexErrorCode} is
 * its keys, code mode's codes are those starting `CODE_`, and `docs/reference/error-codes.md`
 * is generated from it (`npm run docs:reference`).
 */
export const ERROR_CODES = {
  CONFIG_INVALID:
    "The config file or one of its fields is wrong; `path` names the (first) field and a `ConfigError`'s `issues` list every problem found.",
  CONFIG_NOT_FOUND: "The config file named does not exist or cannot be read.",
  CONFIG_VARIABLE_MISSING:
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text shows config syntax
    "A `${VAR}` in the config names an environment variable that is not set and has no `${VAR:-default}`.",
  SECRET_MISSING:
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text shows config syntax
    "A `${secret:NAME}` in the config names a secret the secret store does not hold (`mcplex secrets set NAME`).",
  SECRET_STORE_INVALID:
    "The secret store (or the credential vault beside it) could not be read, decrypted or written.",
  SECRET_KEY_INVALID:
    "The key of the secret store or credential vault is missing, unreadable or does not open it (`MCPLEX_SECRET_KEY`, or the key file).",
  UPSTREAM_UNAVAILABLE:
    "A server is not connected (failed, reconnecting, stopped); retryable, `retryAt` says when it is tried again.",
  UPSTREAM_START_FAILED:
    "A server could not be started (its program not found, its process or connection failing at start).",
  SANDBOX_UNAVAILABLE:
    "A server configured to run in a sandbox cannot, on this machine (no bwrap, or the kernel refuses its namespaces); it is not started unconfined.",
  UPSTREAM_CLOSED: "A server's process exited or its connection closed.",
  UPSTREAM_UNAUTHORIZED:
    "A server needs an OAuth authorization mcplex does not hold, or its OAuth sign-in failed (`mcplex auth login NAME`).",
  UPSTREAM_QUEUE_FULL:
    "Too much already waits for a server to read it; a large message is refused at once (small ones always pass).",
  MEMORY_BUDGET_FULL:
    "The gateway's memory budget is held by requests in flight: a large request waits its turn.",
  REQUEST_TIMEOUT: "A request did not finish in time; retryable.",
  REQUEST_ABORTED: "A request was aborted by its caller's signal.",
  TOOL_NOT_FOUND: "A tool name that is not in the catalog (or not visible through the profile in use).",
  RESOURCE_NOT_FOUND:
    "A resource URI that is not in the catalog (or not visible through the profile in use).",
  PROMPT_NOT_FOUND: "A prompt name that is not in the catalog (or not visible through the profile in use).",
  PROTOCOL_ERROR:
    "A server does not speak a revision mcplex speaks, or its answers do not fit the protocol (a task without a result, input asked for with no handler given, too many `input_required` rounds).",
  TRANSPORT_ERROR: "A message could not be sent to a server.",
  INVALID_ARGUMENT:
    "An argument or option mcplex was given is not valid; the message says which and how to fix it.",
  FILE_LOCKED:
    "A file another mcplex process holds locked (the secret store, the pin lock file, a config being edited).",
  REGISTRY_NOT_FOUND: "`mcplex add`: no server of that name in the MCP Registry.",
  REGISTRY_AMBIGUOUS:
    "`mcplex add`: a name that several servers of the MCP Registry match; the exact name is needed.",
  REGISTRY_UNAVAILABLE:
    "The MCP Registry could not be reached, or answered with something that is not its API.",
  RUNTIME_MISSING:
    "`mcplex add`: a server whose packages need a program this machine lacks (`uvx`, `docker`).",
  REGISTRY_ENTRY_REFUSED:
    "`mcplex add`: a registry entry or Server Card with a field mcplex does not write (an unpinned version, a loader variable, a non-https remote...), or a card it does not read (too large, not JSON, redirected to another origin).",
  WORKSPACE_NOT_FOUND: "A workspace path that does not exist (or vanished, such as a dangling symlink).",
  WORKSPACE_DENIED: "A workspace path outside the root, refused by a rule, or denied by the file system.",
  WORKSPACE_RACE: "A workspace path replaced or moved while it was used; trying again may succeed.",
  WORKSPACE_TOO_SLOW: "A workspace search whose regular expression ran past its time limit.",
  WORKSPACE_TOO_LARGE: "A workspace file over the size limit of the operation.",
  CODE_SYNTAX: "Code mode: the script does not parse (JavaScript or TypeScript); `line`/`column` say where.",
  CODE_ERROR: "Code mode: the script threw (or rejected) and did not catch it.",
  CODE_TIMEOUT: "Code mode: the script ran past its wall-time limit (`limits.wallMs`).",
  CODE_MEMORY: "Code mode: the script used more memory than `limits.memoryBytes`.",
  CODE_STACK_OVERFLOW: "Code mode: the script recursed past `limits.stackBytes`.",
  CODE_TOO_MANY_CALLS: "Code mode: the script called more tools than `limits.maxToolCalls`.",
  CODE_OUTPUT_TOO_LARGE:
    "Code mode: console output and return value together passed `limits.maxOutputBytes`.",
  CODE_STALLED: "Code mode: the script waits on a promise that nothing can settle any more.",
  CODE_BUSY:
    "Code mode: no sandbox worker for the script within its queue's bounds (`limits.queueMs`, `limits.maxQueued`); retryable, `retryAt` says when to try again.",
  QUOTA_EXCEEDED:
    "A tool call over one of `quotas:` (calls per window, or at once); retryable, `retryAt` says when to try again.",
  AUDIT_OPEN_FAILED: "The audit file (`audit.to`, `--audit`) could not be opened at start.",
  AUDIT_BEHIND:
    "A call was not run because its audit line could not be written in time (the audit trail's backlog was full for `waitMs`, or its stream is broken); retrying later may succeed.",
  PIN_LOCK_INVALID: "The tool lock file (`mcplex.lock.json`) cannot be read or is not one.",
  PIN_NOTHING_TO_TRUST: "`mcplex trust` named a server or tool that has no change waiting for approval.",
  TASK_CANCELLED: "A server's task (the tasks extension) was cancelled before it gave a result.",
  SKILL_VERIFICATION_FAILED:
    "Skills: a skill file that does not match the entry it was listed with (digest, size, frontmatter), a file the entry does not list, or an entry that is not valid.",
  CONNECT_REQUIRED:
    "A per-user server the caller has not connected yet: the error carries the `/connect/<server>` URL.",
  SIGN_IN_REQUIRED:
    "A per-user server called by a caller who did not sign in (static token, stdio, library).",
  TOKEN_EXCHANGE_FAILED:
    "A token exchange (RFC 8693) for a server was refused or failed: the provider's answer is in the message.",
  OAUTH_GRANT_REFUSED:
    "An authorization server or identity provider refused a grant mcplex asked without a person (JWT-bearer, ID-JAG): the message says which step refused and why.",
  OAUTH_ASSERTION_UNAVAILABLE:
    "The token mcplex presents for a server (`oauth.assertion`, `oauth.idJag.idToken`) could not be read: the file or command is named.",
} as const satisfies Record<string, string>;

/** Stable machine-readable codes of local errors: the keys of {@link ERROR_CODES}. */
export type McplexErrorCode = keyof typeof ERROR_CODES;

/** Structured context an error may carry; all optional, all safe to log (never secrets). */
export interface ErrorFields {
  server?: string;
  tool?: string;
  transport?: string;
  /** Config path such as `servers.github.env.GITHUB_TOKEN`. */
  path?: string;
  /** What the user can do about it. */
  hint?: string;
  /** When a failed upstream will be tried again (epoch ms). */
  retryAt?: number;
  /** Whether retrying the same operation later may succeed. */
  retryable?: boolean;
}

/**
 * Base class of every local mcplex error.
 *
 * @example
 * try { await hub.callTool("github__search", {}) }
 * catch (e) { if (e instanceof McplexError && e.code === "UPSTREAM_UNAVAILABLE") retryLater(e.retryAt) }
 */
export class McplexError extends Error {
  readonly code: McplexErrorCode;
  readonly server?: string;
  readonly tool?: string;
  readonly transport?: string;
  readonly path?: string;
  readonly hint?: string;
  readonly retryAt?: number;
  readonly retryable: boolean;

  constructor(
    code: McplexErrorCode,
    message: string,
    fields: ErrorFields = {},
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (fields.server !== undefined) this.server = fields.server;
    if (fields.tool !== undefined) this.tool = fields.tool;
    if (fields.transport !== undefined) this.transport = fields.transport;
    if (fields.path !== undefined) this.path = fields.path;
    if (fields.hint !== undefined) this.hint = fields.hint;
    if (fields.retryAt !== undefined) this.retryAt = fields.retryAt;
    this.retryable = fields.retryable ?? false;
  }
}

/** One problem found in a config file. `path` is empty for file-level problems (syntax, I/O). */
export interface ConfigIssue {
  code: McplexErrorCode;
  /** Dotted path of the field, e.g. `servers.github.env.GITHUB_TOKEN`; arrays as `args[2]`. */
  path: string;
  /** What is wrong and how to fix it, without the path. */
  message: string;
  /** 1-based position in the file, when known (syntax errors). */
  line?: number;
  column?: number;
}

/**
 * The config file or one of its fields is wrong; `path` names the (first) field.
 * `issues` lists every problem found, so a user can fix them all in one go.
 */
export class ConfigError extends McplexError {
  readonly issues: ConfigIssue[];

  constructor(
    message: string,
    fields: ErrorFields & { code?: McplexErrorCode; issues?: ConfigIssue[] } = {},
    options?: { cause?: unknown },
  ) {
    super(fields.code ?? "CONFIG_INVALID", message, fields, options);
    this.issues = fields.issues ?? [{ code: this.code, path: fields.path ?? "", message }];
  }
}

/** The secret store could not be read, decrypted or written. */
export class SecretStoreError extends McplexError {}

/** An upstream server is not connected (failed, reconnecting, stopped). */
export class UpstreamUnavailableError extends McplexError {
  constructor(message: string, fields: ErrorFields = {}, options?: { cause?: unknown }) {
    super("UPSTREAM_UNAVAILABLE", message, { retryable: true, ...fields }, options);
  }
}

/** A request did not finish in time. */
export class TimeoutError extends McplexError {
  constructor(message: string, fields: ErrorFields = {}) {
    super("REQUEST_TIMEOUT", message, { retryable: true, ...fields });
  }
}

/** A request was aborted by its caller's signal. */
export class AbortedError extends McplexError {
  constructor(message: string, fields: ErrorFields = {}, options?: { cause?: unknown }) {
    super("REQUEST_ABORTED", message, fields, options);
  }
}

/** Something `mcplex search` / `mcplex add` met in the MCP Registry or on this machine. */
export class RegistryError extends McplexError {}

/** A name that is not in the catalog (or not visible through the profile in use). */
export class NotFoundError extends McplexError {}

/**
 * The code of a {@link NotFoundError}, by what the name names. A name a policy denies answers
 * with the same code as one outside the caller's profile.
 */
export const NOT_FOUND_CODES = {
  tool: "TOOL_NOT_FOUND",
  prompt: "PROMPT_NOT_FOUND",
  resource: "RESOURCE_NOT_FOUND",
  "resource template": "RESOURCE_NOT_FOUND",
  server: "INVALID_ARGUMENT",
  profile: "INVALID_ARGUMENT",
  task: "INVALID_ARGUMENT",
} as const satisfies Record<string, McplexErrorCode>;

/**
 * A JSON-RPC error as it travels on the wire: `code`, `message`, optional `data`.
 * Carries the server it came from when it was received from an upstream.
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data?: unknown;
  readonly server?: string;

  constructor(code: number, message: string, data?: unknown, server?: string) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    if (data !== undefined) this.data = data;
    if (server !== undefined) this.server = server;
  }

  /** The JSON-RPC `error` member for this error. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
