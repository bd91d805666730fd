import { RpcError } from "../errors.js";
import type { CallOptions } from "../hub/hub-types.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { INPUT_REQUIRED_METHODS } from "../protocol/rev2026.js";
import { SERVER_REQUEST_CAPABILITIES, type ServerRequestHandler } from "../protocol/server-requests.js";
import type { InputParking } from "./input-parking.js";
import type { Interceptor } from "./pipeline.js";
import type { RequestContext } from "./request-context.js";
import { targetName } from "./request-target.js";

/**
 * The interceptor that lets a call get its client's input, whatever the two revisions. A
 * 2026 upstream's `input_required` passes through as it is (with its own state); a 2025
 * upstream's server requests go to a 2025 client directly, or are parked for a 2026 client
 * (`parking` answers `input_required` with its own state and resumes on the retry).
 */
export function clientInput(parking: InputParking): Interceptor {
  return (next) => async (request) => {
    if (!INPUT_REQUIRED_METHODS.has(request.method) || request.target?.server === undefined)
      return next(request);
    const ctx = request.context;
    if (!ctx.stateless) {
      return next({
        ...request,
        callOptions: { ...request.callOptions, onServerRequest: sessionHandler(ctx) },
      });
    }
    const { method, params } = request;
    const name = targetName(request.target);
    const state = params.requestState;
    if (parking.owns(state)) return parking.resume(method, name, state, params.inputResponses, ctx.signal);
    const extra: Record<string, unknown> = {};
    if (params.inputResponses !== undefined) extra.inputResponses = params.inputResponses;
    if (state !== undefined) extra.requestState = state;
    return parking.run(method, name, ctx.clientCapabilities, ctx.signal, (handler, signal) => {
      const callOptions: CallOptions = {
        ...request.callOptions,
        signal,
        onServerRequest: handler,
        params: extra,
        returnInputRequired: true,
      };
      return next({ ...request, callOptions });
    });
  };
}

/** Server requests from upstream go straight to a 2025 client that declared the capability. */
function sessionHandler(ctx: RequestContext): ServerRequestHandler {
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
