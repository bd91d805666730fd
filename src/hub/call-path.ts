import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import type { Catalog } from "../catalog/catalog.js";
import { carriesUris, namespaceResult } from "../catalog/namespaced-uris.js";
import { sentArguments } from "../catalog/tool-overrides.js";
import type { CatalogPrompt, CatalogTool, ResourceTarget } from "../catalog/types.js";
import { COMPOSITE_SERVER } from "../config/read-composites.js";
import { isPerUser } from "../config/read-credentials.js";
import { redactValue } from "../config/redact.js";
import type { CompositeToolConfig, ServerConfig } from "../config/types.js";
import type { PerUserServers, UserCallLease } from "../credentials/per-user-servers.js";
import { McplexError } from "../errors.js";
import {
  type InputRequestHandler,
  isInputRequired,
  resolveInputRequired,
} from "../protocol/input-required.js";
import { type MethodRow, STANDARD_METHOD_TABLE, targetParamOf } from "../protocol/method-table.js";
import { REV2026_PROTOCOL_VERSION } from "../protocol/rev2026.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";
import { awaitTask } from "../protocol/task-polling.js";
import { type DetailedTask, isTaskResult, withTasksExtension } from "../protocol/tasks.js";
import type { ClientConnections } from "../servers/client-connections.js";
import { disabledServer, notFound } from "../servers/lookup-errors.js";
import { redactError } from "../upstream/error-redaction.js";
import type { Upstream, UpstreamRequestOptions } from "../upstream/upstream.js";
import {
  type CallOptions,
  type CallRequest,
  compose,
  type Handler,
  type Interceptor,
  type JsonObject,
  needsParsedResults,
  type RequestContext,
} from "./call-pipeline.js";
import { completionRoute } from "./completion-route.js";
import { PipelineExtension, type PipelineExtensionOptions } from "./pipeline-extension.js";
import type { ServerRequestRouter } from "./server-request-router.js";

/** A configured server and its (shared) connection. */
export interface ServerEntry {
  config: ServerConfig;
  upstream: Upstream;
}

/** What the call path needs of the hub around it. */
export interface CallPathHost {
  readonly catalog: Catalog;
  /** The server `name`; throws `NotFoundError` when there is none. */
  entry(name: string): ServerEntry;
  /** The tool behind a name the catalog did not have, waiting for servers still starting (`Hub.waitForTool`). */
  waitForTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal },
  ): Promise<CatalogTool | undefined>;
  /** Connections of `share: false` servers, per client. */
  readonly own: ClientConnections;
  /** Connections of per-user servers (`credentials` not shared), per signed-in user. */
  readonly perUser: PerUserServers;
  /** Which call a server's request belongs to. */
  readonly router: ServerRequestRouter;
  /** The hub-wide handler of server requests, and the capabilities the hub declares. */
  readonly onServerRequest: ServerRequestHandler | undefined;
  readonly clientCapabilities: Record<string, unknown> | undefined;
  /** Takes the config's secrets out of a text. */
  readonly redactor: (text: string) => string;
  /** The composite tool of this name (`composites:`). */
  composite(name: string): CompositeToolConfig | undefined;
}

/**
 * The hub's call path: the library's calls (`callTool`, `readResource`, `getPrompt`, `complete`,
 * `forward`) made into requests and run through the hub's interceptors to {@link #dispatch},
 * which sends each to the server its target names: the connection (shared, or the client's
 * own), server requests routed back to the call, `input_required` answered and retried, secrets
 * taken out of what comes back. The hub owns the servers; this owns what a call does with one.
 */
export class CallPath {
  readonly #host: CallPathHost;
  /** Layers on the path of every call (see {@link use}). */
  readonly #interceptors: Interceptor[];
  /** Layers around each request sent to a server (see `HubOptions.upstreamInterceptors`). */
  readonly #upstreamInterceptors: Interceptor[];
  /** {@link #interceptors} around {@link dispatch}: the library's calls. */
  #pipeline: Handler;
  #revision = 0;
  /** Whether no upstream interceptor needs results parsed (see `ResultNeeds`). */
  #upstreamRaw = true;
  #libraryCalls = 0;

  constructor(
    host: CallPathHost,
    interceptors: readonly Interceptor[] = [],
    upstreamInterceptors: readonly Interceptor[] = [],
  ) {
    this.#host = host;
    this.#interceptors = [...interceptors];
    this.#upstreamInterceptors = [...upstreamInterceptors];
    this.#pipeline = this.#compose();
  }

  /** See `Hub.callTool`. */
  async callTool(
    tool: string | CatalogTool,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<CallToolResult> {
    const { catalog } = this.#host;
    const target =
      typeof tool === "string"
        ? (catalog.resolveTool(tool, options.profile) ?? (await this.#host.waitForTool(tool, options)))
        : tool;
    if (target === undefined) throw notFound("tool", tool as string, options.profile);
    return (await this.#pipeline(
      this.#libraryRequest(
        "tools/call",
        { name: typeof tool === "string" ? tool : target.name, arguments: args },
        { kind: "tool", name: target.name, server: target.server, tool: target },
        options,
      ),
    )) as CallToolResult;
  }

  /** See `Hub.readResource`. */
  async readResource(uri: string | ResourceTarget, options: CallOptions): Promise<ReadResourceResult> {
    const target = typeof uri === "string" ? this.#host.catalog.resolveResource(uri, options.profile) : uri;
    if (target === undefined) throw notFound("resource", uri as string, options.profile);
    const asked = typeof uri === "string" ? uri : target.uri;
    return (await this.#pipeline(
      this.#libraryRequest(
        "resources/read",
        { uri: asked },
        { kind: "resource", uri: asked, server: target.server, resource: target },
        options,
      ),
    )) as ReadResourceResult;
  }

  /**
   * A request of `method` that names a resource by `params.uri` (`skills/get`,
   * `resources/directory/read`): resolved in the catalog (unless its caller did), then run like
   * a read.
   */
  async aboutResource(
    method: string,
    params: JsonObject,
    options: CallOptions,
    resolved?: ResourceTarget,
  ): Promise<JsonObject> {
    const uri = String(params.uri);
    const target = resolved ?? this.#host.catalog.resolveResource(uri, options.profile);
    if (target === undefined) throw notFound("resource", uri, options.profile);
    return await this.#pipeline(
      this.#libraryRequest(
        method,
        params,
        { kind: "resource", uri, server: target.server, resource: target },
        options,
      ),
    );
  }

  /** See `Hub.getPrompt`. */
  async getPrompt(
    name: string | CatalogPrompt,
    args: Record<string, string>,
    options: CallOptions,
  ): Promise<GetPromptResult> {
    const prompt = typeof name === "string" ? this.#host.catalog.resolvePrompt(name, options.profile) : name;
    if (prompt === undefined) throw notFound("prompt", name as string, options.profile);
    return (await this.#pipeline(
      this.#libraryRequest(
        "prompts/get",
        { name: prompt.name, arguments: args },
        { kind: "prompt", name: prompt.name, server: prompt.server, prompt },
        options,
      ),
    )) as GetPromptResult;
  }

  /** See `Hub.complete`. */
  async complete(
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
    argument: { name: string; value: string },
    options: CallOptions & { context?: { arguments?: Record<string, string> } },
  ): Promise<CompleteResult> {
    const { context, ...callOptions } = options;
    const params: Record<string, unknown> = { ref, argument };
    if (context !== undefined) params.context = context;
    // Resolved here so that an unknown ref fails before any layer runs, as the other calls do.
    // The prompt travels with the request: the dispatch does not look it up again.
    const { server, prompt, template } = completionRoute(
      this.#host.catalog,
      params,
      options.profile,
      undefined,
    );
    const target: NonNullable<CallRequest["target"]> =
      ref.type === "ref/prompt"
        ? prompt === undefined
          ? { kind: "prompt", name: ref.name, server }
          : { kind: "prompt", name: ref.name, server, prompt }
        : template === undefined
          ? { kind: "resource", uri: ref.uri, server }
          : { kind: "resource", uri: ref.uri, server, template };
    return (await this.#pipeline(
      this.#libraryRequest("completion/complete", params, target, callOptions),
    )) as unknown as CompleteResult;
  }

  /** See `Hub.forward`. */
  async forward(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options: CallOptions,
  ): Promise<JsonObject> {
    this.#host.entry(server);
    return await this.#pipeline(
      this.#libraryRequest(method, params, { kind: "server", name: server, server }, options),
    );
  }

  /** See `Hub.use`. */
  use(interceptor: Interceptor, at: "call" | "upstream"): () => void {
    const list = at === "upstream" ? this.#upstreamInterceptors : this.#interceptors;
    list.push(interceptor);
    this.#pipeline = this.#compose();
    return () => {
      const index = list.indexOf(interceptor);
      if (index === -1) return;
      list.splice(index, 1);
      this.#pipeline = this.#compose();
    };
  }

  /** The interceptors on the path of every call, the first outermost. */
  get interceptors(): readonly Interceptor[] {
    return this.#interceptors;
  }

  /** Changes each time {@link use} adds or removes an interceptor. */
  get revision(): number {
    return this.#revision;
  }

  /**
   * Changes each time the servers do: the catalog's revision, which every server added,
   * removed, turned on or off changes at once (a gateway's layers compose by them).
   */
  get serversRevision(): number {
    return this.#host.catalog.revision;
  }

  #compose(): Handler {
    this.#revision++;
    this.#upstreamRaw = !needsParsedResults(this.#upstreamInterceptors);
    return compose(this.#interceptors, (request) => this.#dispatch(request));
  }

  /** Runs `request` through the interceptors, then {@link #dispatch}. */
  handle(request: CallRequest): Promise<JsonObject> {
    return this.#pipeline(request);
  }

  /** See `Hub.extend`: the one place the dispatch is handed out, to the end of an extension. */
  extend(options: PipelineExtensionOptions): PipelineExtension {
    return new PipelineExtension(this, options, (request) => this.#dispatch(request));
  }

  /**
   * The end of every pipeline: sends a request whose target is resolved to the server that owns
   * it, with names mapped to the server's own; rejects with `NotFoundError` when the target
   * names nothing. Not async (the connection's request is): a promise of its own on every
   * call's way would be one more microtask turn there and back. Fails only by rejecting.
   */
  #dispatch(request: CallRequest): Promise<JsonObject> {
    const { method, params, target, row, callOptions } = request;
    try {
      if (method === "completion/complete") {
        const { server, sent } = completionRoute(this.#host.catalog, params, request.context.profile, target);
        return this.#request(this.#host.entry(server), request, sent, callOptions);
      }
      if (target?.server === undefined) {
        if (target === undefined) throw new McplexError("INVALID_ARGUMENT", `${method} names no target`);
        const name = target.kind === "resource" ? target.uri : target.name;
        throw notFound(target.kind, name, request.context.profile);
      }
      // A composite has no server: its script runs here (the gateway runs it before, for its callers).
      if (target.server === COMPOSITE_SERVER && target.kind === "tool" && method === "tools/call")
        return this.#composite(request, target.tool);
      const entry = this.#host.entry(target.server);
      // Skill and app URIs in what comes back get the server's namespace, as clients know them.
      const namespace =
        target.kind === "tool"
          ? target.tool?.uriNamespace
          : target.kind === "resource"
            ? target.resource?.namespace
            : target.kind === "prompt"
              ? target.prompt?.uriNamespace
              : undefined;
      const sent = sentParams(request, row);
      if (namespace === undefined || !carriesUris(method))
        return this.#request(entry, request, sent, callOptions);
      // Read to be rewritten: never a result kept as the server's text (a RawJson).
      const options = callOptions.rawResult === true ? { ...callOptions, rawResult: false } : callOptions;
      return this.#request(entry, request, sent, options).then((result) =>
        namespaceResult(method, result, namespace),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A composite tool's call from the library (`callTool`, `mcplex call`, the agent loop): its
   * script's inner calls are the hub's calls with the same options (profile, user, signal).
   */
  async #composite(request: CallRequest, tool: CatalogTool | undefined): Promise<JsonObject> {
    const composite = tool === undefined ? undefined : this.#host.composite(tool.originalName);
    if (tool === undefined || composite === undefined)
      throw notFound(
        "tool",
        request.target?.kind === "tool" ? request.target.name : "",
        request.context.profile,
      );
    const options = request.callOptions;
    const { runComposite } = await import("../ext/composites/run-composite.js");
    return (await runComposite({
      composite,
      name: tool.name,
      args: (request.params.arguments ?? {}) as Record<string, unknown>,
      tools: this.#host.catalog.tools(options.profile),
      callTool: (name, args, signal) => this.callTool(name, args, { ...options, signal }),
      signal: request.context.signal,
    })) as JsonObject;
  }

  /** The request of one of the library's own calls. */
  #libraryRequest(
    method: string,
    params: JsonObject,
    target: NonNullable<CallRequest["target"]>,
    options: CallOptions,
  ): CallRequest {
    const context: RequestContext = {
      stateless: false,
      library: true,
      protocolVersion: REV2026_PROTOCOL_VERSION,
      clientCapabilities: options.clientCapabilities ?? this.#host.clientCapabilities ?? {},
      signal: options.signal ?? NEVER_ABORTED,
      notify: ignore,
    };
    if (options.profile !== undefined) context.profile = options.profile;
    if (options.client !== undefined) context.client = options.client;
    if (options.logLevel !== undefined) context.logLevel = options.logLevel;
    return {
      id: `hub-${++this.#libraryCalls}`,
      method,
      params,
      context,
      target,
      row: STANDARD_METHOD_TABLE.get(method),
      callOptions: options,
    };
  }

  /**
   * What a server tells a client while it works (log messages and other notifications, and
   * each call's progress) with the config's secrets taken out, raw and encoded: a server may
   * quote the token it was given in them, as in its errors. The one place both pass.
   */
  redactNotice<T>(params: T, redact: (text: string) => string = this.#host.redactor): T {
    return redactValue(params, redact);
  }

  async #request(
    entry: ServerEntry,
    request: CallRequest,
    params: JsonObject,
    options: CallOptions,
  ): Promise<JsonObject> {
    const { config } = entry;
    if (!config.enabled) throw disabledServer(config.name);
    const { own, router } = this.#host;
    const client = options.client;
    // A per-user server: the caller's own connection (per user is enough, share: false or not).
    const lease: UserCallLease | undefined =
      config.credentials !== undefined && isPerUser(config)
        ? await this.#host.perUser.acquire(options.user, config, options.signal)
        : undefined;
    // A user's own values and tokens are taken out of that user's results only.
    const redactor = lease?.redact ?? this.#host.redactor;
    const upstream =
      lease !== undefined
        ? lease.upstream
        : config.share === false && client !== undefined
          ? await own.acquire(client, config)
          : entry.upstream;
    const handler = options.onServerRequest;
    const slot = handler === undefined ? undefined : router.register(upstream, handler, client);
    // A shared server given another client's roots hears they changed, and asks again.
    if (client !== undefined && router.rootsChangeFor(upstream, client)) {
      upstream.notify("notifications/roots/list_changed");
    }
    try {
      const onProgress = options.onProgress;
      // A tool call waits for the task its server may answer with, unless its caller takes it.
      const waits = request.method === "tools/call" && options.tasks !== "return";
      const requestOptions: UpstreamRequestOptions = {
        timeout: options.timeout ?? config.timeout,
        signal: options.signal,
        onProgress: onProgress === undefined ? undefined : (p) => onProgress(this.redactNotice(p, redactor)),
        // A 2025 server reads no capabilities per request (nor knows the extension).
        clientCapabilities:
          waits && options.tasks !== "decline" && !upstream.rev2025
            ? withTasksExtension(options.clientCapabilities ?? upstream.declaredCapabilities)
            : options.clientCapabilities,
        logLevel: options.logLevel,
        // Unless an upstream interceptor reads the result (a recording) or declares nothing.
        rawResult: options.rawResult === true && this.#upstreamRaw,
      };
      const sent = options.params === undefined ? params : { ...params, ...options.params };
      const first = await this.#out(upstream, request, sent, requestOptions);
      // A 2025 server answers in full: `input_required` and tasks came with 2026.
      if (upstream.rev2025) return toolErrorRedacted(first, redactor);
      const inputHandler: InputRequestHandler | undefined = handler ?? this.#host.onServerRequest;
      if (!isInputRequired(first) || options.returnInputRequired === true) {
        if (waits && isTaskResult(first))
          return toolErrorRedacted(
            await this.#awaitTask(upstream, request, first, requestOptions, inputHandler),
            redactor,
          );
        return toolErrorRedacted(first, redactor);
      }
      // A 2026 server needs input: ask the handler, then retry with the answers.
      const final = await resolveInputRequired<JsonObject>(first, {
        server: config.name,
        handler: inputHandler,
        signal: options.signal,
        retry: (extra) => this.#out(upstream, request, { ...params, ...extra }, requestOptions),
      });
      // Input first, then a task (the spec's composition of the two): waited for the same way.
      if (waits && isTaskResult(final))
        return toolErrorRedacted(
          await this.#awaitTask(upstream, request, final, requestOptions, inputHandler),
          redactor,
        );
      return toolErrorRedacted(final, redactor);
    } catch (error) {
      // Every front and the CLI get upstream errors from here: an upstream may quote its token.
      throw redactError(error, redactor);
    } finally {
      if (slot !== undefined) router.unregister(upstream, slot);
      lease?.release();
    }
  }

  /**
   * Waits for the task a server answered a tool call with (see `CallOptions.tasks`): its polls
   * and input answers go to the same connection through the upstream interceptors, declaring
   * the extension; while it runs, the call's progress says how it goes.
   */
  #awaitTask(
    upstream: Upstream,
    request: CallRequest,
    created: DetailedTask,
    options: UpstreamRequestOptions,
    handler: InputRequestHandler | undefined,
  ): Promise<JsonObject> {
    const polling: UpstreamRequestOptions = {
      timeout: options.timeout,
      signal: options.signal,
      onProgress: undefined,
      clientCapabilities: withTasksExtension(options.clientCapabilities ?? upstream.declaredCapabilities),
      logLevel: options.logLevel,
    };
    const progress = options.onProgress;
    return awaitTask(created, {
      server: upstream.name,
      signal: options.signal,
      handler,
      send: (method, params, signal) =>
        this.#out(
          upstream,
          { ...request, method, row: STANDARD_METHOD_TABLE.get(method) },
          params,
          signal === polling.signal ? polling : { ...polling, signal },
        ),
      onPoll:
        progress === undefined
          ? undefined
          : (task, polls) =>
              progress({ progress: polls, message: task.statusMessage ?? `task ${task.status}` }),
    });
  }

  /**
   * Sends one request of a call to `upstream`: through the upstream interceptors when there are
   * any, composed here around this connection (a few closures, only while there are any).
   */
  #out(
    upstream: Upstream,
    request: CallRequest,
    params: JsonObject,
    options: UpstreamRequestOptions,
  ): Promise<JsonObject> {
    const { method } = request;
    if (this.#upstreamInterceptors.length === 0) return upstream.request<JsonObject>(method, params, options);
    const send = compose(this.#upstreamInterceptors, (sent) =>
      upstream.request<JsonObject>(sent.method, sent.params, upstreamOptions(sent.callOptions)),
    );
    return send({ ...request, params, callOptions: { ...request.callOptions, ...options } });
  }
}

/**
 * A result with secrets taken out of every string in it, when it is an error (`isError: true`).
 * Successful results are returned unscanned: they are the tool's answer, often large, and on
 * the hot path; a tool asked to print its own environment may show it.
 */
function toolErrorRedacted<T>(result: T, redact: (text: string) => string): T {
  if ((result as { isError?: unknown } | null)?.isError !== true) return result;
  return redactValue(result, redact);
}

/** A signal that never aborts: the context of a library call made without one. */
const NEVER_ABORTED = new AbortController().signal;
const ignore = (): void => {};

/**
 * The params a server gets for a request whose target is resolved: the standard calls exactly
 * as MCP defines them (the client's `_meta` stays with the client: the connection writes its
 * own envelope and progress token), any other method as it came, less `_meta`, with its
 * target's name or URI mapped to the server's own (a task handle to the server's task id).
 */
function sentParams(request: CallRequest, row: MethodRow | undefined): JsonObject {
  const { method, params, target } = request;
  if (method === "tools/call" && target?.kind === "tool" && target.tool !== undefined)
    return {
      name: target.tool.originalName,
      arguments:
        target.tool.argumentOverrides === undefined
          ? (params.arguments ?? {})
          : sentArguments(target.tool, (params.arguments ?? {}) as Record<string, unknown>),
    };
  if (method === "prompts/get" && target?.kind === "prompt" && target.prompt !== undefined)
    return { name: target.prompt.originalName, arguments: params.arguments ?? {} };
  if (method === "resources/read" && target?.kind === "resource" && target.resource !== undefined)
    return { uri: target.resource.uri };
  const { _meta: _, ...sent } = params;
  const param = row === undefined ? undefined : targetParamOf(row);
  if (param === undefined || target === undefined) return sent;
  if (target.kind === "tool" && target.tool !== undefined) sent[param] = target.tool.originalName;
  else if (target.kind === "prompt" && target.prompt !== undefined) sent[param] = target.prompt.originalName;
  else if (target.kind === "resource" && target.resource !== undefined) sent[param] = target.resource.uri;
  else if (target.kind === "task" && target.taskId !== undefined) sent[param] = target.taskId;
  return sent;
}

/** The options of an upstream request, from a call's options. */
function upstreamOptions(options: CallOptions): UpstreamRequestOptions {
  return {
    timeout: options.timeout,
    signal: options.signal,
    onProgress: options.onProgress,
    clientCapabilities: options.clientCapabilities,
    logLevel: options.logLevel,
    // Set only while every upstream interceptor declared it reads results raw (see #upstreamRaw).
    rawResult: options.rawResult,
  };
}
