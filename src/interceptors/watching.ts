import {
  type Interceptor,
  interceptor,
  type JsonObject,
  type LayerDecision,
  targetName,
} from "../hub/call-pipeline.js";
import { requestCaller } from "../hub/request-caller.js";

/** A forwarded request while it runs, as a dashboard shows it. */
export interface WatchedCall {
  /** Sequential per watcher. */
  id: number;
  method: string;
  /** The tool or prompt name, or the resource URI, as the client sent it. */
  target?: string;
  /** The server that answers it, when the name resolves. */
  server?: string;
  /** The catalog view of the client (its token's profile). */
  profile?: string;
  /** Who called (see `RequestCaller.subject`): the signed-in user, a token's key, `stdio`. */
  subject: string;
  /** The client it came through, where known (see `RequestCaller.client`). */
  client?: string;
  protocolVersion: string;
  /** Epoch ms. */
  startedAt: number;
}

/** How a {@link WatchedCall} ended. */
export interface CallEnd {
  /** `tool_error`: the tool answered with `isError` (or its server failed the call). */
  outcome: "ok" | "error" | "tool_error";
  ms: number;
  /** The error message, or the start of a tool error's text; secrets redacted. */
  error?: string;
  /** What policies, guardrails and quotas decided on it (see `RequestContext.decisions`). */
  decisions?: WatchedDecision[];
}

/** One decision on a watched call, as a dashboard shows it. */
export interface WatchedDecision {
  by: LayerDecision["by"];
  name: string;
  effect: string;
  phase: LayerDecision["phase"];
  /** A guardrail's or a quota's account of it; secrets redacted. */
  detail?: string;
}

/** Sees forwarded requests start and end (a dashboard's live calls). */
export interface CallWatcher {
  started(call: WatchedCall): void;
  ended(call: WatchedCall, end: CallEnd): void;
}

/**
 * An interceptor that shows `watcher` the forwarded requests (their row says `forwarded`) start
 * and end; `redact` takes secrets out of what it is shown.
 */
export function watching(watcher: CallWatcher, redact: (text: string) => string): Interceptor {
  let ids = 0;
  // It reads `isError`, and the content only of a result with `isError: true` (never a RawJson).
  return interceptor({ needs: "raw" }, (next) => async (request) => {
    if (request.row?.forwarded !== true) return next(request);
    const ctx = request.context;
    const caller = requestCaller(ctx);
    const call: WatchedCall = {
      id: ++ids,
      method: request.method,
      subject: caller.subject,
      protocolVersion: ctx.protocolVersion,
      startedAt: Date.now(),
    };
    // The client's own name for itself is text it chose.
    if (caller.client !== undefined) call.client = redact(caller.client);
    const target = request.target;
    if (target !== undefined) {
      call.target = redact(targetName(target));
      if (target.server !== undefined) call.server = target.server;
    }
    if (ctx.profile !== undefined) call.profile = ctx.profile;
    watcher.started(call);
    const started = performance.now();
    let outcome: CallEnd["outcome"] = "error";
    let error: string | undefined;
    try {
      const result: JsonObject = await next(request);
      outcome = result.isError === true ? "tool_error" : "ok";
      if (outcome === "tool_error") error = firstText(result);
      return result;
    } catch (thrown) {
      error = thrown instanceof Error ? thrown.message : String(thrown);
      throw thrown;
    } finally {
      const end: CallEnd = { outcome, ms: performance.now() - started };
      if (error !== undefined) end.error = errorSummary(redact(error));
      if (ctx.decisions !== undefined && ctx.decisions.length > 0)
        end.decisions = ctx.decisions.map((d) => watchedDecision(d, redact));
      watcher.ended(call, end);
    }
  });
}

function watchedDecision(d: LayerDecision, redact: (text: string) => string): WatchedDecision {
  const watched: WatchedDecision = { by: d.by, name: d.name, effect: d.effect, phase: d.phase };
  if (d.detail !== undefined) watched.detail = errorSummary(redact(d.detail));
  return watched;
}

/** Longest error text a watcher is given. */
const ERROR_CHARS = 300;

/** The start of a tool error's text, or of an error message, cut to a readable length. */
export function errorSummary(text: string): string {
  const line = text.trim();
  return line.length <= ERROR_CHARS ? line : `${line.slice(0, ERROR_CHARS - 1)}…`;
}

/** The text of a result's first text content, if any. */
export function firstText(result: Record<string, unknown>): string | undefined {
  const content = result.content;
  if (!Array.isArray(content)) return undefined;
  for (const item of content) {
    const text = (item as { type?: unknown; text?: unknown } | null)?.text;
    if (typeof text === "string") return text;
  }
  return undefined;
}
