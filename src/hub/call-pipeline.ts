import type { Identity } from "../credentials/identity.js";
/**
 * The one pipeline every call goes through, whoever makes it: a gateway's clients on any front
 * and revision, the library's `hub.callTool`, the CLI, the agent loop, and the inner calls of
 * `call_tool` and `run_code`. One request type, one interceptor type, one `compose`.
 */

import type {
  CatalogPrompt,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
} from "../catalog/types.js";
import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import type { UserRef } from "../credentials/user-credentials.js";
import type { McplexError } from "../errors.js";
import type { MethodRow } from "../protocol/method-table.js";
import type { Progress } from "../protocol/rpc-connection.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";

/** A request's params or a result, as JSON. */
export type JsonObject = Record<string, unknown>;

/**
 * What a request names, looked up once in the catalog through the caller's profile, before
 * any interceptor runs. `server` is absent when the name resolves to nothing (yet): a tool
 * whose server is still starting is looked up again when the route waits for it.
 */
export type RequestTarget =
  | {
      kind: "tool";
      name: string;
      server?: string;
      tool?: CatalogTool;
      /**
       * Why the catalog has no such tool for this caller yet: a per-user server that may own it
       * could not open the caller's connection to list it (sign in first, connect first, an
       * exchange refused). A `tools/call` answers with it as a tool error, not "unknown tool".
       */
      unreachable?: McplexError;
    }
  | { kind: "prompt"; name: string; server?: string; prompt?: CatalogPrompt }
  | {
      kind: "resource";
      uri: string;
      server?: string;
      resource?: ResourceTarget;
      /** A completion's `ref/resource`: the resource template its URI names. */
      template?: CatalogResourceTemplate;
    }
  | { kind: "server"; name: string; server?: string }
  /**
   * A task handle (`name`, as the client sent it), opened to its server and the id that server
   * gave the task (`taskId`); both absent when the handle names no task this caller may reach.
   * `tool` is the exposed name of the tool whose call created the task (absent in a handle
   * minted before handles named it): a request about the task is authorized as that tool's call.
   */
  | { kind: "task"; name: string; server?: string; taskId?: string; tool?: string };

/** The name or URI a target was asked for. */
export function targetName(target: RequestTarget): string {
  return target.kind === "resource" ? target.uri : target.name;
}

export type { Identity };

/**
 * The front a request came in on: `stdio`, `http` (Streamable HTTP `/mcp`, 2025 sessions and
 * 2026 requests alike), `sse` (the legacy HTTP+SSE `/sse`) or `ws` (WebSocket `/ws`).
 */
export type FrontKind = "stdio" | "http" | "sse" | "ws";

/**
 * What the pipeline knows about whoever made a request, whatever the front (stdio, HTTP,
 * WebSocket) and the protocol revision; for the library's own calls, `library` is `true`.
 */
export interface RequestContext {
  /**
   * `true` for a request of a stateless revision (2026-07-28: an envelope in every request,
   * no session); `false` for a 2025 (or 2024-11-05) session's request and for library calls.
   */
  stateless: boolean;
  protocolVersion: string;
  /** The client's declared capabilities: per request in 2026, per session in 2025. */
  clientCapabilities: Record<string, unknown>;
  /** Set on calls the process makes itself (`hub.callTool`, the CLI, the agent loop). */
  library?: true;
  /** The front the request came in on (absent for library calls and a gateway driven in code). */
  front?: FrontKind;
  /**
   * The MCP client's own name for itself, where it gave one: a 2025 session's `initialize`
   * `clientInfo`, a 2026 request's envelope. Client-chosen: for logs and audit, never for rights.
   */
  clientInfo?: Readonly<{ name?: string; version?: string }>;
  /** The catalog view this client may see. */
  profile?: string;
  /**
   * How this client sees the tools, when its front decided (its token's `mode`, else the
   * front's); otherwise its profile's mode or the gateway's default apply.
   */
  mode?: CatalogMode;
  /** Who is calling, as the front's authenticator decided (absent for stdio and library calls). */
  identity?: Identity;
  /**
   * Who is calling, as the front let it in: the token's key (`token#0`, never the token) or,
   * without tokens, the client's address. Results cached for one caller are never another's.
   */
  caller?: string;
  /**
   * The session the request came on (absent for stateless 2026 HTTP requests): servers marked
   * `share: false` get a connection per session.
   */
  client?: object;
  /** The 2025 session's id on the wire (`Mcp-Session-Id`), where it has one. */
  sessionId?: string;
  /** The HTTP request's headers, for a request that came alone on one (a 2026 POST). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** Aborted when the client cancels the request or goes away. */
  signal: AbortSignal;
  /** Minimum level of log notifications the client wants (2025 `logging/setLevel`, 2026 envelope). */
  logLevel?: string;
  /** Sends a notification tied to this request (progress, log). */
  notify(method: string, params: Record<string, unknown>): void;
  /**
   * Sends a request to the client and waits for its answer (2025 sessions only:
   * sampling, elicitation, roots). Absent when the channel cannot carry it.
   */
  requestClient?(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /**
   * What layers decided about this request and the calls it made (a policy rule that held, a
   * guardrail that acted), in order, for the audit trail and the span. Made by the first layer
   * that decides something; absent while none has.
   */
  decisions?: LayerDecision[];
}

/** One decision a layer took about a request (see {@link RequestContext.decisions}). */
export interface LayerDecision {
  /** What decided: `policy` (a rule of `policies:` or `auth.require`), `guardrail` or `quota`. */
  by: "policy" | "guardrail" | "quota";
  /** The rule's name, the guardrail's (`size`, `schema`, `pii`), or the quota's. */
  name: string;
  /**
   * What it did: a rule's effect (`allow`, `deny`, `require`, `audit`), a guardrail's outcome
   * (`refused`, `rewrote`, in audit mode `would-refuse`, `would-rewrite`, and when it failed
   * `failed-open` or `failed-closed`), or a quota's (`refused`).
   */
  effect: string;
  /** A guardrail's account of what it found (`2 emails redacted`, `cut from 90000 to 4096 bytes`). */
  detail?: string;
  /** Before the request reached its server, or on its result. */
  phase: "request" | "response";
  /** The request's target (tool, prompt, resource), as resolved. */
  target?: string;
  /** Scopes a `require` asked that the caller lacked. */
  missing?: string[];
  /** Why the rule could not be evaluated (it then counted as holding, but for `allow`). */
  error?: string;
}

/**
 * One request on its way through the pipeline, the same object whoever made it (a gateway's
 * front of any revision, or the library). Interceptors read it and may pass a changed copy to
 * `next` (other params, other call options); they never mutate it.
 */
export interface CallRequest {
  /** The JSON-RPC id the client gave the request. */
  readonly id: string | number;
  readonly method: string;
  readonly params: JsonObject;
  /** Who asked and how to reach them: revision, capabilities, profile, signal, notify. */
  readonly context: RequestContext;
  /** What the request names, as its method's row says (`tools/call` a tool, ...). */
  readonly target: RequestTarget | undefined;
  /** The method's row in the gateway's method table; `undefined` for a method mcplex does not know. */
  readonly row: MethodRow | undefined;
  /**
   * The options the hub call is made with: the client's signal, capabilities, log level,
   * profile and session, and the progress relay. Interceptors may add to them (a timeout,
   * a server-request handler).
   */
  readonly callOptions: CallOptions;
}

/** Answers a request with its result, or throws (an `RpcError` for a wire error). */
export type Handler = (request: CallRequest) => Promise<JsonObject>;

/**
 * What an interceptor reads of the results that come back through it:
 * - `"raw"`: no member but `isError` (and the content of a result with `isError: true`, which is
 *   never kept as text). A `RawJson` result (`CallOptions.rawResult`) answers those reads right,
 *   so a gateway still relays results unparsed with it on the path.
 * - `"parsed"`: anything; results reach it parsed. The default: an interceptor that declares
 *   nothing gets parsed results.
 */
export type ResultNeeds = "raw" | "parsed";

/**
 * A layer on the path of every request: given the rest of the pipeline (`next`), returns the
 * handler that runs in its place. Registered on the hub (`hub.use`, `HubOptions.interceptors`)
 * it sees every call whoever makes it; on a gateway, only that gateway's clients' requests. It
 * may look at the request, change it, answer it itself (refuse, serve from a cache) or time and
 * record what `next` does. `needs` says what it reads of results (see {@link ResultNeeds});
 * absent, it is `"parsed"`.
 *
 * @example
 * const audit: Interceptor = (next) => async (request) => {
 *   const result = await next(request);
 *   log.info({ method: request.method, target: request.target, isError: result.isError });
 *   return result;
 * };
 */
export type Interceptor = ((next: Handler) => Handler) & { readonly needs?: ResultNeeds };

/**
 * The handler made of `interceptors` around `terminal`, the first one outermost. With no
 * interceptor the handler is `terminal` itself.
 */
export function compose(interceptors: readonly Interceptor[], terminal: Handler): Handler {
  let handler = terminal;
  for (let i = interceptors.length - 1; i >= 0; i--) handler = interceptors[i]!(handler);
  return handler;
}

/**
 * `layer` with what it declares: the interceptor of the shipped ones that read no more of a
 * result than `isError` (`interceptor({ needs: "raw" }, (next) => ...)`).
 *
 * @example
 * const timing = interceptor({ needs: "raw" }, (next) => async (request) => {
 *   const started = performance.now();
 *   try { return await next(request); } finally { record(performance.now() - started); }
 * });
 */
export function interceptor(
  declaration: { needs: ResultNeeds },
  layer: (next: Handler) => Handler,
): Interceptor {
  return Object.assign(layer, { needs: declaration.needs });
}

/** Whether one of `interceptors` reads results parsed (declares `needs: "parsed"`, or nothing). */
export function needsParsedResults(interceptors: readonly Interceptor[]): boolean {
  for (const layer of interceptors) if (layer.needs !== "raw") return true;
  return false;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Milliseconds without an answer or progress before the call fails. Default: the server's `timeout`. */
  timeout?: number;
  onProgress?: (progress: Progress) => void;
  /** Resolve the name through this profile; names outside it are not found. */
  profile?: string;
  /** Answers this call's server-to-client requests (before the hub-wide handler). */
  onServerRequest?: ServerRequestHandler;
  /**
   * Extra request params passed to the server as they are: a gateway forwards a 2026 client's
   * `inputResponses` and `requestState` this way.
   */
  params?: Record<string, unknown>;
  /** Hand a 2026 `input_required` result back as it is instead of resolving it through the handler. */
  returnInputRequired?: boolean;
  /**
   * What a server's task (the tasks extension, `resultType: "task"`) means for a `tools/call`:
   * - `"wait"` (the default): the call declares the extension to the server, waits for the
   *   task's result (polling as the task's `pollIntervalMs` says, its input requests answered
   *   by the call's handler, the task cancelled on abort) and resolves with it, as an ordinary
   *   call: a model or a 2025 client sees a long-running tool as one call;
   * - `"return"`: the caller speaks tasks itself (a gateway's 2026 client that declared the
   *   extension): its capabilities go as they are and a task comes back as it is;
   * - `"decline"`: the caller does not speak tasks (a 2026 client that did not declare the
   *   extension): its capabilities go as they are, so the server answers in full or says it
   *   needs the capability (-32021); a task that comes anyway is waited for.
   */
  tasks?: "wait" | "return" | "decline";
  /** The capabilities of the client the call is made for, sent to 2026 servers with the call. */
  clientCapabilities?: Record<string, unknown>;
  /** Ask 2026 servers for log messages at this level or above during the call. */
  logLevel?: string;
  /**
   * The client session the call is made for (any object that stands for it; a gateway passes its
   * session). Servers marked `share: false` get a connection per client; a shared server that was
   * given another client's roots is told they changed. Release it with `hub.releaseClient`.
   */
  client?: object;
  /**
   * The signed-in user the call is made for (a gateway sets it from an OAuth identity): servers
   * whose `credentials` are not `shared` are called with this user's own connection and
   * credentials, and refuse a call without one (`SIGN_IN_REQUIRED`).
   */
  user?: UserRef;
  /**
   * The caller relays the result without reading it: a server's answer with none but raw members
   * may come back as a `RawJson` (its text as it came, never parsed). A gateway asks for it for
   * its fronts' requests only while no interceptor on its path needs parsed results (see
   * {@link ResultNeeds}), upstream interceptors included.
   */
  rawResult?: boolean;
}
