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
  // Built whole, every member present (`undefined` where unknown), in one order: every
  // request's context then has one shape, rather than one per set of members it happens to have.
  return {
    stateless: true,
    protocolVersion: envelope.protocolVersion,
    clientCapabilities: envelope.clientCapabilities,
    signal: front.signal,
    notify: front.notify,
    profile: front.profile,
    mode: front.mode,
    caller: front.caller,
    identity: front.identity,
    client: front.client,
    headers: front.headers,
    front: front.front,
    clientInfo: envelope.clientInfo,
    logLevel: envelope.logLevel,
  };
}
