import { cappedLine } from "../audit/audit-line.js";
import type { AuditSink } from "../audit/audit-sink.js";
import { DEFAULT_AUDIT_MAX_LINE } from "../config/read-audit.js";
import { redactValue } from "../config/redact.js";
import { McplexError } from "../errors.js";
import {
  type CallRequest,
  type FrontKind,
  type Handler,
  type Interceptor,
  interceptor,
  type JsonObject,
  type LayerDecision,
  targetName,
} from "../hub/call-pipeline.js";
import { type RequestCaller, requestCaller } from "../hub/request-caller.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { toWireError, type WireError } from "../protocol/wire-error.js";

/** One line of the audit trail: one call, resource read, prompt get or completion, as it ended. */
export interface AuditRecord extends RequestCaller {
  /** When the request entered the gateway (ISO 8601, UTC). */
  time: string;
  /** The front it came in on; absent for a gateway driven in code. */
  front?: FrontKind;
  method: string;
  /** The tool or prompt name, or the resource URI, as the client sent it (secrets redacted). */
  target?: string;
  /** The server that answers it, when the name resolves. */
  server?: string;
  /**
   * `ok`; `error` for a result with `isError`; for a refusal or failure answered as a JSON-RPC
   * error, the error's code: a local error's own (`AUDIT_BEHIND`, `CODE_BUSY`, ...), else the
   * JSON-RPC code's name (`InvalidParams`) or, for a code without one, its number.
   */
  outcome: string;
  /** The JSON-RPC error code the client got, when it got an error. */
  code?: number;
  durationMs: number;
  /** The JSON-RPC id the client gave the request (`7/1` for the first inner call of request 7). */
  requestId: string | number;
  /** The W3C trace id: the gateway's span's when telemetry is on, else the client's `traceparent`. */
  traceId?: string;
  /** The 2025 session's id (`Mcp-Session-Id`), where there is one. */
  sessionId?: string;
  /**
   * What layers decided on the way (see `RequestContext.decisions`): each policy rule that held,
   * with its effect, in order, the request's inner calls' included.
   */
  decisions?: LayerDecision[];
  /** With `content`: the arguments, redacted. */
  arguments?: unknown;
  /** With `content`: the result, redacted. */
  result?: unknown;
  /** With `content`: the error the client got, redacted. */
  error?: { code: number; message: string };
}

/** Options of {@link auditLog}. */
export interface AuditLogOptions {
  /** Where the lines go; its backlog bound decides whether a call waits or is refused. */
  sink: AuditSink;
  /** Takes secrets out of text (the hub's `redact`): targets, ids, names and content. */
  redact: (text: string) => string;
  /** Add each request's arguments and its result (or error), redacted. Default false. */
  content?: boolean;
  /**
   * Most bytes of one line (its newline included): longer strings in it are cut, each to its
   * length, SHA-256 and first characters (see `cappedLine`). Default 64 KiB; at least 16 KiB.
   */
  maxLine?: number;
  /**
   * The trace id of the request's span, read as the request enters the layer (telemetry's
   * `traceId`: the layer then runs inside the gateway's SERVER span). Without one, the client's
   * `traceparent` (in `_meta` or its HTTP header) is read.
   */
  traceId?: () => string | undefined;
}

/** The names of the JSON-RPC codes mcplex knows, for {@link AuditRecord.outcome}. */
const CODE_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** `version-traceid-parentid-flags`; the trace id of all zeros is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;

/**
 * The audit trail's layer: one {@link AuditRecord} line per forwarded request (`tools/call`,
 * `resources/read`, `prompts/get`, `completion/complete`, and forwarded rows an embedder adds;
 * lists are not audited), written to `sink` when it ends, whoever answered it: the server, a
 * layer that refused it, or the route that did not find its target. Composed outermost on a
 * gateway (`GatewayOptions.outer`), so every front and the inner calls of `call_tool` and
 * `run_code` are audited; not composed at all when there is no audit trail.
 *
 * Before a request runs, the sink must have room for its line: when it is behind, the request
 * waits (bounded) and is refused with `AUDIT_BEHIND` rather than run unaudited.
 */
export function auditLog(options: AuditLogOptions): Interceptor {
  const { sink, redact } = options;
  const content = options.content === true;
  const maxLine = options.maxLine ?? DEFAULT_AUDIT_MAX_LINE;
  const traceIdOf = options.traceId;
  const layer: Interceptor = (next) => (request) => {
    if (request.row?.forwarded !== true) return next(request);
    // Read now: the span is active only as the request enters.
    const traceId = traceIdOf?.() ?? clientTraceId(request);
    const wait = sink.room(request.context.signal);
    if (wait === undefined) return audited(request, next, traceId);
    return wait.then(() => audited(request, next, traceId));
  };
  // Without `content` it reads a result's `isError` alone, which a RawJson result answers right.
  return content ? layer : interceptor({ needs: "raw" }, layer);

  async function audited(
    request: CallRequest,
    next: Handler,
    traceId: string | undefined,
  ): Promise<JsonObject> {
    const time = Date.now();
    const started = performance.now();
    // Those already taken belong to the request this one is an inner call of.
    const decided = request.context.decisions?.length ?? 0;
    let result: JsonObject | undefined;
    let wire: WireError | undefined;
    let outcome = "ok";
    try {
      result = await next(request);
      if (result.isError === true) outcome = "error";
      return result;
    } catch (error) {
      wire = toWireError(error);
      outcome = error instanceof McplexError ? error.code : (CODE_NAMES.get(wire.code) ?? String(wire.code));
      throw error;
    } finally {
      const ms = Math.round((performance.now() - started) * 1000) / 1000;
      const record = recordOf(request, time, outcome, wire, ms, traceId, redact);
      const decisions = request.context.decisions;
      if (decisions !== undefined && decisions.length > decided)
        record.decisions = decisions
          .slice(decided)
          .map((d) => (d.target === undefined ? d : { ...d, target: redact(d.target) }));
      if (content) {
        const args = request.params.arguments ?? request.params.argument;
        if (args !== undefined) record.arguments = redactValue(args, redact);
        if (wire !== undefined) record.error = { code: wire.code, message: redact(wire.message) };
        else record.result = redactValue(result, redact);
      }
      sink.write(lineOf(record, maxLine));
    }
  }
}

/**
 * The record's fields in the order of a line, each set only when it has a value (assigned one
 * by one: spreading small objects cost a third of the layer's time per call).
 */
function recordOf(
  request: CallRequest,
  time: number,
  outcome: string,
  wire: WireError | undefined,
  durationMs: number,
  traceId: string | undefined,
  redact: (text: string) => string,
): AuditRecord {
  const { context, target } = request;
  const caller = requestCaller(context);
  const record: Partial<AuditRecord> = {
    time: new Date(time).toISOString(),
    subject: caller.subject,
    via: caller.via,
  };
  if (caller.issuer !== undefined) record.issuer = caller.issuer;
  // The MCP client's name is its own choice, like any text it sends.
  if (caller.client !== undefined) record.client = redact(caller.client);
  if (context.front !== undefined) record.front = context.front;
  record.method = request.method;
  if (target !== undefined) {
    // A resource URI may carry a credential in its query.
    record.target = redact(targetName(target));
    if (target.server !== undefined) record.server = target.server;
  }
  record.outcome = outcome;
  if (wire !== undefined) record.code = wire.code;
  record.durationMs = durationMs;
  // Client-chosen: a client may have put a secret of the config in its id.
  record.requestId = typeof request.id === "string" ? redact(request.id) : request.id;
  if (traceId !== undefined) record.traceId = traceId;
  if (context.sessionId !== undefined) record.sessionId = context.sessionId;
  return record as AuditRecord;
}

/**
 * The record as one line of at most `maxLine` bytes (long fields cut); content that cannot be
 * written as JSON is left out, saying so.
 */
function lineOf(record: AuditRecord, maxLine: number): string {
  try {
    return cappedLine(record as unknown as Record<string, unknown>, maxLine);
  } catch (error) {
    const { arguments: _a, result: _r, ...rest } = record;
    const contentError = error instanceof Error ? error.message : String(error);
    return cappedLine({ ...rest, contentError }, maxLine);
  }
}

/** The trace id of the client's `traceparent` (`_meta` first, as telemetry reads it, then the header). */
function clientTraceId(request: CallRequest): string | undefined {
  const fromMeta = (request.params._meta as Record<string, unknown> | undefined)?.traceparent;
  const header = typeof fromMeta === "string" ? fromMeta : request.context.headers?.traceparent;
  if (typeof header !== "string") return undefined;
  const id = TRACEPARENT.exec(header)?.[1];
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}
