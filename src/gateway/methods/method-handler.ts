import { RpcError } from "../../errors.js";
import type { GatewayTasks } from "../../ext/tasks/gateway-tasks.js";
import type { CallRequest, Handler, JsonObject } from "../../hub/call-pipeline.js";
import type { Hub } from "../../hub/hub.js";
import { ErrorCode } from "../../protocol/error-codes.js";

/** What the gateway says about itself. */
export interface GatewayIdentity {
  name: string;
  version: string;
  instructions?: string;
}

/** What a method handler answers from: the hub's catalog and servers, the gateway's identity and tasks. */
export interface MethodContext {
  readonly hub: Hub;
  readonly identity: GatewayIdentity;
  /** Task ids to and from handles (see `GatewayTasks`). */
  readonly tasks: GatewayTasks;
  /** Into the hub's pipeline, inside its interceptors: how a handler sends a request to a server. */
  readonly dispatch: Handler;
}

/**
 * The gateway's answer to one method, at the end of the pipeline: the request as the layers
 * pass it on (its target resolved by the method's row), and the gateway's parts.
 */
export type MethodHandler = (request: CallRequest, gateway: MethodContext) => Promise<JsonObject>;

/** Handlers by method name: what one handler file gives the gateway's table. */
export type MethodHandlers = Readonly<Record<string, MethodHandler>>;

/** `params[key]` when it is a non-empty string; else the -32602 answer that says so. */
export function requireString(params: JsonObject, key: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "")
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${key} must be a non-empty string`);
  return value;
}
