import type { CatalogPrompt, CatalogTool, ResourceTarget } from "../catalog/types.js";
import type { CallOptions } from "../hub/hub-types.js";
import type { RequestContext } from "./request-context.js";

/** A request's params or a result, as JSON. */
export type JsonObject = Record<string, unknown>;

/**
 * What a request names, looked up once in the catalog through the caller's profile, before
 * any interceptor runs. `server` is absent when the name resolves to nothing (yet): a tool
 * whose server is still starting is looked up again when the route waits for it.
 */
export type RequestTarget =
  | { kind: "tool"; name: string; server?: string; tool?: CatalogTool }
  | { kind: "prompt"; name: string; server?: string; prompt?: CatalogPrompt }
  | { kind: "resource"; uri: string; server?: string; resource?: ResourceTarget };

/**
 * One client request on its way through the gateway, the same object whatever the front
 * (stdio, Streamable HTTP, HTTP+SSE, WebSocket) and the revision. Interceptors read it and may
 * pass a changed copy to `next` (other params, other call options); they never mutate it.
 */
export interface GatewayRequest {
  /** The JSON-RPC id the client gave the request. */
  readonly id: string | number;
  readonly method: string;
  readonly params: JsonObject;
  /** Who asked and how to reach them: revision, capabilities, profile, signal, notify. */
  readonly context: RequestContext;
  /** What the request names (tools/call, prompts/get, resources/read, completion/complete). */
  readonly target: RequestTarget | undefined;
  /**
   * The options the hub call is made with: the client's signal, capabilities, log level,
   * profile and session, and the progress relay. Interceptors may add to them (a timeout,
   * a server-request handler).
   */
  readonly callOptions: CallOptions;
}

/** Answers a request with its result, or throws (an `RpcError` for a wire error). */
export type Handler = (request: GatewayRequest) => Promise<JsonObject>;

/**
 * A layer on the path of every request: given the rest of the pipeline (`next`), returns the
 * handler that runs in its place. It may look at the request, change it, answer it itself
 * (refuse, serve from a cache) or time and record what `next` does.
 *
 * @example
 * const audit: Interceptor = (next) => async (request) => {
 *   const result = await next(request);
 *   log.info({ method: request.method, target: request.target, isError: result.isError });
 *   return result;
 * };
 */
export type Interceptor = (next: Handler) => Handler;

/**
 * The handler made of `interceptors` around `terminal`, the first one outermost. Composed
 * once, when the gateway is built or an interceptor is added, never per request: with no
 * interceptor the handler is `terminal` itself.
 */
export function compose(interceptors: readonly Interceptor[], terminal: Handler): Handler {
  let handler = terminal;
  for (let i = interceptors.length - 1; i >= 0; i--) handler = interceptors[i]!(handler);
  return handler;
}
