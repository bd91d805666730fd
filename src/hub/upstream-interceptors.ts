import { McplexError } from "../errors.js";
import type { Upstream } from "../upstream/upstream.js";
import type { UpstreamCall, UpstreamHandler, UpstreamInterceptor } from "./hub-types.js";

/** Sends one request of a call on `upstream`, through the interceptors. */
export type UpstreamSend = (upstream: Upstream, call: UpstreamCall) => Promise<unknown>;

/** Where an {@link UpstreamCall} keeps the connection it goes out on. */
const UPSTREAM = Symbol("mcplex.upstream");

/**
 * The interceptors composed once around the hub's requests to servers, the first outermost;
 * `undefined` when there are none, so that the hub sends directly. The connection travels with
 * the call under a symbol: copies an interceptor passes on (`{ ...call, params }`) keep it.
 */
export function composeUpstream(interceptors: readonly UpstreamInterceptor[]): UpstreamSend | undefined {
  if (interceptors.length === 0) return undefined;
  let handler: UpstreamHandler = (call) => {
    const upstream = (call as { [UPSTREAM]?: Upstream })[UPSTREAM];
    if (upstream === undefined)
      throw new McplexError(
        "INVALID_ARGUMENT",
        "an upstream interceptor passed on a call it did not copy from the one it got",
        { hint: "pass next({ ...call, params }) rather than a new object" },
      );
    return upstream.request(call.method, call.params, call.options);
  };
  for (let i = interceptors.length - 1; i >= 0; i--) handler = interceptors[i]!(handler);
  const composed = handler;
  return (upstream, call) => composed({ ...call, [UPSTREAM]: upstream } as UpstreamCall);
}
