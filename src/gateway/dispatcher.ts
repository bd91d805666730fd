import type { Tool } from "@modelcontextprotocol/client";
import { McplexError, NotFoundError, RpcError } from "../errors.js";
import type { CallOptions, Hub } from "../hub/hub.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { logPasses } from "../protocol/log-levels.js";
import { REV2025_ONLY_METHODS } from "../protocol/rev2025.js";
import {
  CACHEABLE_METHODS,
  META,
  REV2026_ONLY_METHODS,
  REV2026_PROTOCOL_VERSIONS,
} from "../protocol/rev2026.js";
import { SERVER_REQUEST_CAPABILITIES, type ServerRequestHandler } from "../protocol/server-requests.js";
import {
  type CallEnd,
  type CallWatcher,
  callSubject,
  errorSummary,
  firstText,
  WATCHED_METHODS,
  type WatchedCall,
} from "./call-watch.js";
import { InputParking } from "./input-parking.js";
import type { RequestContext } from "./request-context.js";

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** One handled request, for metrics and logs. */
export interface RequestSample {
  method: string;
  server?: string;
  tool?: string;
  outcome: "ok" | "error" | "tool_error";
  seconds: number;
}

/** What the gateway says about itself. */
export interface GatewayIdentity {
  name: string;
  version: string;
  instructions?: string;
}

/** The capabilities the gateway serves (the catalog may change; the capabilities do not). */
export function serverCapabilities(modern: boolean): Record<string, unknown> {
  const capabilities: Record<string, unknown> = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
  };
  if (!modern) capabilities.logging = {};
  return capabilities;
}

/**
 * Answers one client request from the hub's catalog: the method table of the gateway.
 * Names and URIs are mapped both ways by the hub; results pass through untouched apart
 * from the fields each protocol generation requires.
 */
export class Dispatcher {
  readonly #hub: Hub;
  readonly #identity: GatewayIdentity;
  readonly parking: InputParking;
  readonly #observers = new Set<(sample: RequestSample) => void>();
  readonly #watchers = new Set<CallWatcher>();
  #callIds = 0;
  /** Requests in flight per upstream server, to relay that server's log messages. */
  readonly #inflight = new Map<string, Set<RequestContext>>();

  constructor(hub: Hub, identity: GatewayIdentity, parking = new InputParking()) {
    this.#hub = hub;
    this.#identity = identity;
    this.parking = parking;
  }

  /** Receives one sample per request handled (metrics, per-call log lines). */
  observe(observer: (sample: RequestSample) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Sees every forwarded request start and end (tools/call, resources/read, prompts/get, completion/complete). */
  watchCalls(watcher: CallWatcher): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  /** Handles a request; throws {@link RpcError} for wire errors. */
  async handle(method: string, params: Params | undefined, ctx: RequestContext): Promise<Result> {
    if (ctx.modern ? REV2025_ONLY_METHODS.has(method) : REV2026_ONLY_METHODS.has(method)) {
      throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
    if (this.#observers.size === 0 && this.#watchers.size === 0)
      return this.#shape(method, await this.#route(method, params ?? {}, ctx), ctx);
    return this.#observed(method, params ?? {}, ctx);
  }

  /** {@link handle} with samples for observers and start/end for watchers. */
  async #observed(method: string, params: Params, ctx: RequestContext): Promise<Result> {
    const started = performance.now();
    const subject = callSubject(this.#hub, method, params, ctx.profile);
    let call: WatchedCall | undefined;
    if (this.#watchers.size > 0 && WATCHED_METHODS.has(method)) {
      call = { id: ++this.#callIds, method, protocolVersion: ctx.protocolVersion, startedAt: Date.now() };
      if (subject.target !== undefined) call.target = this.#hub.redact(subject.target);
      if (subject.server !== undefined) call.server = subject.server;
      if (ctx.profile !== undefined) call.profile = ctx.profile;
      for (const watcher of this.#watchers) watcher.started(call);
    }
    let outcome: RequestSample["outcome"] = "error";
    let error: string | undefined;
    try {
      const result = await this.#route(method, params, ctx);
      outcome = result.isError === true ? "tool_error" : "ok";
      if (outcome === "tool_error" && call !== undefined) error = firstText(result);
      return this.#shape(method, result, ctx);
    } catch (thrown) {
      error = thrown instanceof Error ? thrown.message : String(thrown);
      throw thrown;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const sample: RequestSample = { method, outcome, seconds };
      if (method === "tools/call" && subject.tool !== undefined) {
        sample.server = subject.server;
        sample.tool = subject.tool;
      }
      for (const observer of this.#observers) observer(sample);
      if (call !== undefined) {
        const end: CallEnd = { outcome, ms: seconds * 1000 };
        if (error !== undefined) end.error = errorSummary(this.#hub.redact(error));
        for (const watcher of this.#watchers) watcher.ended(call, end);
      }
    }
  }

  #shape(method: string, result: Result, ctx: RequestContext): Result {
    return ctx.modern ? this.#modern(method, result) : legacy(result);
  }

  async #route(method: string, params: Params, ctx: RequestContext): Promise<Result> {
    const hub = this.#hub;
    const profile = ctx.profile;
    switch (method) {
      case "ping":
        return {};
      case "server/discover": {
        const result: Result = {
          supportedVersions: [...REV2026_PROTOCOL_VERSIONS],
          capabilities: serverCapabilities(true),
        };
        if (this.#identity.instructions !== undefined) result.instructions = this.#identity.instructions;
        return result;
      }
      case "tools/list":
        return {
          tools: hub
            .tools(profile)
            .map((t): Tool => (t.name === t.tool.name ? t.tool : { ...t.tool, name: t.name })),
        };
      case "prompts/list":
        return {
          prompts: hub
            .prompts(profile)
            .map((p) => (p.name === p.prompt.name ? p.prompt : { ...p.prompt, name: p.name })),
        };
      case "resources/list":
        return {
          resources: hub
            .resources(profile)
            .map((r) => (r.uri === r.resource.uri ? r.resource : { ...r.resource, uri: r.uri })),
        };
      case "resources/templates/list":
        return { resourceTemplates: hub.resourceTemplates(profile).map((t) => t.resourceTemplate) };
      case "tools/call": {
        const name = requireString(params, "name");
        const args = params.arguments ?? {};
        if (typeof args !== "object" || args === null || Array.isArray(args)) {
          throw new RpcError(ErrorCode.InvalidParams, "Invalid params: arguments must be an object");
        }
        // A tool whose server is still starting is waited for, not refused as unknown.
        const tool =
          hub.catalog.resolveTool(name, profile) ??
          (await hub.findTool(
            name,
            profile === undefined ? { signal: ctx.signal } : { profile, signal: ctx.signal },
          ));
        if (tool === undefined)
          throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { name });
        try {
          return await this.#tracked(tool.server, ctx, () =>
            this.#withInput(method, name, params, ctx, (options) =>
              hub.callTool(name, args as Params, options),
            ),
          );
        } catch (error) {
          return toolError(error);
        }
      }
      case "prompts/get": {
        const name = requireString(params, "name");
        if (hub.catalog.resolvePrompt(name, profile) === undefined) {
          throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`, { name });
        }
        const args = (params.arguments ?? {}) as Record<string, string>;
        return await this.#withInput(method, name, params, ctx, (options) =>
          hub.getPrompt(name, args, options),
        );
      }
      case "resources/read": {
        const uri = requireString(params, "uri");
        if (hub.catalog.resolveResource(uri, profile) === undefined) {
          throw new RpcError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
        }
        return await this.#withInput(method, uri, params, ctx, (options) => hub.readResource(uri, options));
      }
      case "completion/complete": {
        const ref = params.ref as { type?: string; name?: string; uri?: string } | undefined;
        const argument = params.argument as { name: string; value: string } | undefined;
        if (ref === undefined || argument === undefined) {
          throw new RpcError(
            ErrorCode.InvalidParams,
            "Invalid params: completion/complete needs ref and argument",
          );
        }
        const target =
          ref.type === "ref/prompt"
            ? { type: "ref/prompt" as const, name: String(ref.name) }
            : { type: "ref/resource" as const, uri: String(ref.uri) };
        const context = params.context as { arguments?: Record<string, string> } | undefined;
        return (await hub.complete(target, argument, {
          signal: ctx.signal,
          ...(profile === undefined ? {} : { profile }),
          ...(context === undefined ? {} : { context }),
        })) as unknown as Result;
      }
      case "resources/subscribe":
        await hub.subscribeResource(requireString(params, "uri"), {
          signal: ctx.signal,
          ...(profile === undefined ? {} : { profile }),
        });
        return {};
      case "resources/unsubscribe":
        await hub.unsubscribeResource(requireString(params, "uri"), profile === undefined ? {} : { profile });
        return {};
      default:
        throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
  }

  async #tracked<T>(server: string, ctx: RequestContext, run: () => Promise<T>): Promise<T> {
    let set = this.#inflight.get(server);
    if (set === undefined) {
      set = new Set();
      this.#inflight.set(server, set);
    }
    set.add(ctx);
    try {
      return await run();
    } finally {
      set.delete(ctx);
      if (set.size === 0) this.#inflight.delete(server);
    }
  }

  /**
   * Relays an upstream's log message to the requests in flight on that server whose
   * clients asked for that level (2025 clients that set none get everything).
   */
  relayLog(server: string, params: Record<string, unknown>): void {
    for (const ctx of this.#inflight.get(server) ?? []) {
      if (
        ctx.modern
          ? logPasses(params.level, ctx.logLevel)
          : ctx.logLevel === undefined || logPasses(params.level, ctx.logLevel)
      ) {
        ctx.notify("notifications/message", params);
      }
    }
  }

  /**
   * Runs a call that may need the client's input. A 2026 upstream's `input_required`
   * passes through as it is (with its own state); a 2025 upstream's server requests go
   * to a 2025 client directly, or are parked for a 2026 client.
   */
  async #withInput(
    method: string,
    name: string,
    params: Params,
    ctx: RequestContext,
    call: (options: CallOptions) => Promise<unknown>,
  ): Promise<Result> {
    const base: CallOptions = { signal: ctx.signal, clientCapabilities: ctx.clientCapabilities };
    // A 2025 client that set no level gets every log message; a 2026 client only what it asked for.
    const logLevel = ctx.modern ? ctx.logLevel : (ctx.logLevel ?? "debug");
    if (logLevel !== undefined) base.logLevel = logLevel;
    if (ctx.profile !== undefined) base.profile = ctx.profile;
    if (ctx.client !== undefined) base.client = ctx.client;
    const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    if (token !== undefined) {
      base.onProgress = (p) => ctx.notify("notifications/progress", { ...p, progressToken: token });
    }
    if (!ctx.modern) {
      base.onServerRequest = legacyClientHandler(ctx);
      return (await call(base)) as Result;
    }
    const state = params.requestState;
    if (this.parking.owns(state)) {
      return this.parking.resume(method, name, state, params.inputResponses, ctx.signal);
    }
    const extra: Params = {};
    if (params.inputResponses !== undefined) extra.inputResponses = params.inputResponses;
    if (state !== undefined) extra.requestState = state;
    return this.parking.run(
      method,
      name,
      ctx.clientCapabilities,
      ctx.signal,
      (handler, signal) =>
        call({
          ...base,
          signal,
          onServerRequest: handler,
          params: extra,
          returnInputRequired: true,
        }) as Promise<Result>,
    );
  }

  #modern(method: string, result: Result): Result {
    const meta = (result._meta as Record<string, unknown> | undefined) ?? {};
    const shaped: Result = {
      ...result,
      resultType: result.resultType ?? "complete",
      _meta: { ...meta, [META.serverInfo]: { name: this.#identity.name, version: this.#identity.version } },
    };
    if (CACHEABLE_METHODS.has(method) && shaped.resultType === "complete") {
      // The catalog changes whenever an upstream does; clients learn of it through
      // subscriptions/listen, so lists are fresh only as long as nothing is announced.
      shaped.ttlMs = 0;
      shaped.cacheScope = "private";
    }
    return shaped;
  }
}

/** 2025 clients never see 2026-only result fields. */
function legacy(result: Result): Result {
  if (result.resultType === undefined && result.ttlMs === undefined && result.cacheScope === undefined)
    return result;
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result;
  return rest;
}

/** Server requests from upstream go straight to a 2025 client that declared the capability. */
function legacyClientHandler(ctx: RequestContext): ServerRequestHandler {
  return async (request) => {
    const capability = SERVER_REQUEST_CAPABILITIES.get(request.method);
    if (
      ctx.requestClient === undefined ||
      (capability !== undefined && ctx.clientCapabilities[capability] === undefined)
    ) {
      throw new RpcError(
        ErrorCode.MethodNotFound,
        `the client did not declare the ${capability ?? request.method} capability, so ${request.method} cannot be answered`,
      );
    }
    return ctx.requestClient(request.method, request.params, request.signal);
  };
}

function requireString(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "")
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${key} must be a non-empty string`);
  return value;
}

/**
 * Failures of a tool call that the model should read (server down, timeout) become tool
 * results with `isError`; errors the server answered pass through as wire errors.
 */
function toolError(error: unknown): Result {
  if (error instanceof RpcError) throw error;
  if (error instanceof NotFoundError) throw new RpcError(ErrorCode.InvalidParams, error.message);
  if (error instanceof McplexError) {
    return { isError: true, content: [{ type: "text", text: error.message.split("\n")[0] }] };
  }
  throw error;
}
