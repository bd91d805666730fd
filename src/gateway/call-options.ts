import { userRefOf } from "../credentials/user-ref.js";
import type { RequestContext } from "../hub/call-pipeline.js";
import type { CallOptions } from "../hub/hub-types.js";
import { sessionHandler } from "../interceptors/client-input.js";
import { declaresTasks } from "../protocol/tasks.js";

/**
 * What a forwarded request's hub call carries from its client: signal, capabilities, log level,
 * profile, session, the progress relay, and for a 2025 session the handler that sends server
 * requests to its client; `rawResult` when its front relays the result as it comes. Built with
 * every key, in one order: the hub reads these options on every call, and objects of one shape
 * keep those reads fast.
 */
export function callOptionsOf(
  ctx: RequestContext,
  params: Record<string, unknown>,
  rawResult = false,
): CallOptions {
  const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
  const stateless = ctx.stateless;
  return {
    signal: ctx.signal,
    timeout: undefined,
    onProgress:
      token === undefined
        ? undefined
        : (p) => ctx.notify("notifications/progress", { ...p, progressToken: token }),
    profile: ctx.profile,
    onServerRequest: stateless ? undefined : sessionHandler(ctx),
    // A 2025-11-25 client's experimental task request goes to its server as it came.
    params: stateless || params.task === undefined ? undefined : { task: params.task },
    returnInputRequired: undefined,
    // A 2026 client takes a task itself when it declared the extension; a 2025 client's call waits.
    tasks: stateless ? (declaresTasks(ctx.clientCapabilities) ? "return" : "decline") : undefined,
    clientCapabilities: ctx.clientCapabilities,
    // A 2025 client that set no level gets every log message; a 2026 client only what it asked for.
    logLevel: ctx.stateless ? ctx.logLevel : (ctx.logLevel ?? "debug"),
    client: ctx.client,
    user: userRefOf(ctx.identity),
    rawResult,
  };
}
