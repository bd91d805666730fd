import type { McplexError } from "../errors.js";
import type { JsonObject } from "./call-pipeline.js";

/** The typed error each tool error result the route made came from (see {@link toolErrorCause}). */
const causes = new WeakMap<JsonObject, McplexError>();

/**
 * Notes that the tool error `result` (`isError`) was made from `error`, for the interceptors
 * around whoever made it; the result itself carries only the error's text.
 */
export function setToolErrorCause(result: JsonObject, error: McplexError): void {
  causes.set(result, error);
}

/**
 * The typed error a tool's `isError` result was made from, for the interceptors around the
 * route (the connect prompt turns `CONNECT_REQUIRED` into a URL elicitation); `undefined` for
 * any other result, the server's own tool errors included.
 */
export function toolErrorCause(result: JsonObject): McplexError | undefined {
  return causes.get(result);
}
