import type { RequestContext } from "../hub/call-pipeline.js";
import type { Envelope } from "../protocol/rev2026.js";

/**
 * The context of a 2026 request, from its envelope (read with `readEnvelope`) and what the
 * front knows: the one place every front sets up a stateless request.
 */
export function statelessContext(
  envelope: Envelope,
  front: Pick<
    RequestContext,
    "signal" | "notify" | "profile" | "mode" | "caller" | "identity" | "client" | "headers" | "front"
  >,
): RequestContext {
  const ctx: RequestContext = {
    stateless: true,
    protocolVersion: envelope.protocolVersion,
    clientCapabilities: envelope.clientCapabilities,
    signal: front.signal,
    notify: front.notify,
  };
  if (front.profile !== undefined) ctx.profile = front.profile;
  if (front.mode !== undefined) ctx.mode = front.mode;
  if (front.caller !== undefined) ctx.caller = front.caller;
  if (front.identity !== undefined) ctx.identity = front.identity;
  if (front.client !== undefined) ctx.client = front.client;
  if (front.headers !== undefined) ctx.headers = front.headers;
  if (front.front !== undefined) ctx.front = front.front;
  if (envelope.clientInfo !== undefined) ctx.clientInfo = envelope.clientInfo;
  if (envelope.logLevel !== undefined) ctx.logLevel = envelope.logLevel;
  return ctx;
}
