import { RpcError } from "../errors.js";
import type {
  CallRequest,
  Handler,
  Interceptor,
  JsonObject,
  RequestContext,
  RequestTarget,
} from "../hub/call-pipeline.js";
import { interceptor, targetName } from "../hub/call-pipeline.js";
import type { CallOptions } from "../hub/hub-types.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { SERVER_REQUEST_CAPABILITIES, type ServerRequestHandler } from "../protocol/server-requests.js";

/**
 * Where a 2026 client's calls wait while their 2025 server asks for the client's input: the
 * gateway's `InputParking` (src/gateway/input-parking.ts) is one.
 */
export interface CallParking {
  /** Whether a request state was minted here (else it belongs to an upstream server). */
  owns(state: unknown): state is string;
  /**
   * Runs a call (`start`) of `method` on `target` whose server requests must reach a 2026 client:
   * resolves with its result, or with an `input_required` result when the server asks. Only
   * `principal` may retry, naming the same target.
   */
  run(
    method: string,
    target: RequestTarget,
    capabilities: Record<string, unknown>,
    signal: AbortSignal,
    start: (handler: ServerRequestHandler, signal: AbortSignal) => Promise<JsonObject>,
    principal?: string,
  ): Promise<JsonObject>;
  /**
   * Delivers a retry's `inputResponses` to the parked call its `requestState` names (`name`: what
   * the retry names, see `targetName`).
   */
  resume(
    method: string,
    name: string,
    state: string,
    responses: unknown,
    signal: AbortSignal,
    principal?: string,
  ): Promise<JsonObject>;
}

/**
 * The interceptor that lets a call get its client's input, whatever the two revisions. A
 * 2026 upstream's `input_required` passes through as it is (with its own state); a 2025
 * upstream's server requests go to a 2025 client directly, or are parked for a 2026 client
 * (`parking` answers `input_required` with its own state and resumes on the retry).
 */
export function clientInput(parking: CallParking): Interceptor {
  // Not async: a 2025 session's call passes straight to `next`, with no promise of this layer's
  // own on its way.
  return interceptor({ needs: "raw" }, (next) => (request) => {
    if (request.row?.inputRequired !== true || request.target?.server === undefined) return next(request);
    const ctx = request.context;
    if (!ctx.stateless) {
      // `callOptionsOf` (src/gateway/call-request.ts) gave it the handler already (the gateway builds every forwarded request
      // with it); a request an interceptor built without one gets it here.
      if (request.callOptions.onServerRequest !== undefined) return next(request);
      return next(withCallOptions(request, { ...request.callOptions, onServerRequest: sessionHandler(ctx) }));
    }
    return parked(request, request.target, next);
  });

  /**
   * A 2026 client's call: its server's requests are parked, the client's input resumes it. Not
   * async: it hands on the parking's promise, which an async function would wrap in one more.
   */
  function parked(request: CallRequest, target: RequestTarget, next: Handler): Promise<JsonObject> {
    const ctx = request.context;
    const { method, params } = request;
    const state = params.requestState;
    const principal = principalOf(ctx);
    if (parking.owns(state))
      return parking.resume(method, targetName(target), state, params.inputResponses, ctx.signal, principal);
    // What the server gets beside its params: none on a first call (no object to merge in).
    let extra: Record<string, unknown> | undefined;
    if (params.inputResponses !== undefined) extra = { inputResponses: params.inputResponses };
    if (state !== undefined) extra = { ...extra, requestState: state };
    // The target, not its name: the name is needed only if the call parks (almost none does).
    return parking.run(
      method,
      target,
      ctx.clientCapabilities,
      ctx.signal,
      (handler, signal) => {
        const callOptions = withOptions(request.callOptions, signal, handler, extra);
        return next(withCallOptions(request, callOptions));
      },
      principal,
    );
  }
}

/**
 * `{ ...request, callOptions }`, written out in the order `Gateway.request` builds a request: a
 * spread that then sets a member it copied goes through V8's slow path (about 8k instructions a
 * call under callgrind), and the object comes out in the one shape the layers after it read.
 */
function withCallOptions(request: CallRequest, callOptions: CallOptions): CallRequest {
  return {
    id: request.id,
    method: request.method,
    params: request.params,
    context: request.context,
    target: request.target,
    row: request.row,
    callOptions,
  };
}

/**
 * Who a parked call belongs to: the caller's token (`token#<n>`, the same on every replica of
 * one config), the signed-in caller (its identity's key: the digest of issuer and subject, or
 * of issuer and client for a machine caller; the same on every replica) and profile. A caller
 * without either (loopback, no tokens configured) is only its profile: its address changes
 * with the replica a retry passes through.
 */
function principalOf(ctx: RequestContext): string {
  const token = ctx.caller?.startsWith("token#") === true ? ctx.caller : "";
  const signedIn = ctx.identity?.via === "oauth" ? ctx.identity.key : "";
  return `${token}|${signedIn}|${ctx.profile ?? ""}`;
}

/** `options` for a parked call: its own signal and handler, the retry's params, the interim result back. */
function withOptions(
  options: CallOptions,
  signal: AbortSignal,
  handler: ServerRequestHandler,
  params: Record<string, unknown> | undefined,
): CallOptions {
  return {
    signal,
    timeout: options.timeout,
    onProgress: options.onProgress,
    profile: options.profile,
    onServerRequest: handler,
    params,
    returnInputRequired: true,
    tasks: options.tasks,
    clientCapabilities: options.clientCapabilities,
    logLevel: options.logLevel,
    client: options.client,
    user: options.user,
    // The parking hands the answer on unread (a RawJson never is an input_required result).
    rawResult: options.rawResult,
  };
}

/**
 * The handler of a 2025 session's call: server requests from upstream go straight to its client,
 * when it declared the capability.
 */
export function sessionHandler(ctx: RequestContext): ServerRequestHandler {
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
