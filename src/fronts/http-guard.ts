import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { readOrigin } from "../config/origin-rules.js";
import { McplexError, type McplexErrorCode } from "../errors.js";
import type { BudgetLease } from "./memory-budget.js";

// Checks the HTTP front runs on every request: no regex, shared refusals, little allocation.

/** The default port of `mcplex serve --http`. */
export const DEFAULT_PORT = 8420;

/**
 * A request one of these checks refused: the status to answer with and a message safe to show
 * (never a secret). A caller that admission turned away is an `AdmissionRefusal` (./caller.ts).
 */
export type GuardRefusal<S extends number = number> = { ok: false; status: S; message: string };

/** Passed, or refused with a status. */
export type GuardResult<S extends number = number> = { ok: true } | GuardRefusal<S>;

/**
 * Which Host and Origin values are served. Host entries are hostnames, lowercase,
 * IPv6 in brackets (`[::1]`), matching any port, or `host:port` for one port only.
 * Origin entries are origins as browsers serialize them (`https://app.example.com`,
 * `http://localhost:5173`: lowercase, no default port) and match exactly, port included.
 * When Hosts are checked (not `"any"`), an Origin that is `http://` + the request's own Host
 * passes too: the gateway's own page, by whatever name and port the browser reached it.
 */
export interface GuardPolicy {
  allowedHosts: ReadonlySet<string> | "any";
  allowedOrigins: ReadonlySet<string> | "any";
}

/** Extra Host and Origin entries (as in {@link GuardPolicy}) and how many tokens are configured. */
export interface GuardPolicyOptions {
  allowedHosts?: readonly string[];
  /** Origins written as the operator wrote them (`HTTPS://App.example.com:443`): normalized here. */
  allowedOrigins?: readonly string[];
  tokens?: number;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const LOOPBACK = new Set([...LOOPBACK_NAMES, "::1"]);

/** Whether a bind address or hostname is loopback (`localhost`, `127.0.0.0/8`, `::1`). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK.has(h) || h.startsWith("127.") || h.startsWith("::ffff:127.");
}

/**
 * The Host/Origin policy for a gateway bound to `bindHost:port`, plus `options`.
 * - Loopback bind: hosts `localhost`, `127.0.0.1`, `[::1]` on any port (rebinding changes
 *   the name, not the port; an exact port breaks `ssh -L`), and origins `http://` + those
 *   on `port` exactly: a page on another local port (a dev server) is another site.
 * - Other binds: the configured entries, or `"any"` when none are configured and
 *   `options.tokens > 0` (the token protects; browsers never attach it by themselves).
 *   A specific bind address is a valid Host (an IP literal cannot be rebound), and
 *   `http://<bind>:<port>` a valid Origin. See also {@link checkNonLoopbackBind}.
 * Either way an Origin equal to `http://` + the request's checked Host passes (see
 * {@link GuardPolicy}). Throws when an `allowedOrigins` entry is not an origin.
 */
export function defaultGuardPolicy(
  bindHost: string,
  port: number,
  options: GuardPolicyOptions = {},
): GuardPolicy {
  const hosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
  const origins = new Set((options.allowedOrigins ?? []).map(originEntry));
  const local = isLoopbackHost(bindHost) || bindHost === "0.0.0.0" || bindHost === "::" || bindHost === "";
  if (!isLoopbackHost(bindHost) && hosts.size === 0 && (options.tokens ?? 0) > 0) {
    return { allowedHosts: "any", allowedOrigins: origins.size === 0 ? "any" : origins };
  }
  const literal = bindHost.includes(":") && !bindHost.startsWith("[") ? `[${bindHost}]` : bindHost;
  // Browsers leave the default port out of an Origin.
  const portPart = port === 80 ? "" : `:${port}`;
  for (const name of local ? LOOPBACK_NAMES : [literal.toLowerCase()]) {
    hosts.add(name);
    origins.add(`http://${name}${portPart}`);
  }
  return { allowedHosts: hosts, allowedOrigins: origins };
}

/** An allowed Origin entry as browsers send it, or an error naming the entry and the fix. */
function originEntry(entry: string): string {
  const read = readOrigin(entry);
  if ("origin" in read) return read.origin;
  throw new McplexError("INVALID_ARGUMENT", `allowed origin ${JSON.stringify(entry)} ${read.problem}`, {
    hint: "list origins as scheme://host[:port] (serve.allowedOrigins, --allow-origin)",
  });
}

/** A Host value read back by the URL parser: hostname (IPv6 in brackets) and port ("" when absent). */
type Authority = { readonly hostname: string; readonly port: string };

/** Parsed Host values; clients send few distinct ones, so this stays small and hot. */
const parsed = new Map<string, Authority | null>();

function remember(key: string, value: Authority | null): Authority | null {
  if (parsed.size >= 512) parsed.clear();
  parsed.set(key, value);
  return value;
}

/**
 * Reads a lowercase Host value with the URL parser, or `null` when it does not parse or does
 * not read back as itself: userinfo (`localhost:1@evil.com`), a path, query or fragment, an
 * empty or bad port, a host the parser rewrites (`127.1`), anything after `]`.
 */
function parseHost(host: string): Authority | null {
  const known = parsed.get(host);
  if (known !== undefined) return known;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return remember(host, null);
  }
  // Equal to what the parser read as the host, so nothing else came with it. The parser
  // drops the default port; `localhost:80` is still a valid Host.
  if (host === url.host) return remember(host, { hostname: url.hostname, port: url.port });
  if (url.port === "" && host === `${url.host}:80`)
    return remember(host, { hostname: url.hostname, port: "80" });
  return remember(host, null);
}

/** Results are shared frozen constants: the hot path allocates nothing to pass or refuse. */
const refuse = <S extends number>(status: S, message: string): GuardRefusal<S> =>
  Object.freeze({ ok: false, status, message });
const OK: { ok: true } = Object.freeze({ ok: true });
const MISSING_HOST = refuse(400, "Bad Request: missing Host header");
const MALFORMED_HOST = refuse(400, "Bad Request: the Host header is not a valid host[:port]");
const BAD_HOST = refuse(403, "Forbidden: Host not allowed (DNS rebinding protection)");
const BAD_ORIGIN = refuse(
  403,
  "Forbidden: Origin not allowed: only the gateway's own origin (scheme, host and port) may call it; " +
    "list another with serve.allowedOrigins or --allow-origin",
);
const BAD_TYPE = refuse(415, "Unsupported Media Type: Content-Type must be application/json");

/**
 * Whether `origin` (lowercase) is `http://` + the request's Host, as a browser serializes it
 * (no `:80`): the page this server itself served, by the name and port the browser used.
 */
function isOwnOrigin(origin: string, { hostname, port }: Authority): boolean {
  const portPart = port === "80" ? "" : port;
  const length = 7 + hostname.length + (portPart === "" ? 0 : portPart.length + 1);
  return (
    origin.length === length &&
    origin.startsWith("http://") &&
    origin.startsWith(hostname, 7) &&
    (portPart === "" || (origin.charCodeAt(7 + hostname.length) === 58 /* : */ && origin.endsWith(portPart)))
  );
}

/**
 * Refuses requests whose Host (or Origin, when present) is not in the policy: the
 * defence against DNS rebinding and against pages of other sites, other local ports
 * included. 400 for a missing Host, 403 otherwise (as the SDK does, and as the spec
 * requires for Origin). An Origin matches exactly, scheme, host and port; `Origin: null`
 * (sandboxed frames, `file:` pages) is refused unless origins are `"any"`.
 */
export function checkHostAndOrigin(
  headers: IncomingHttpHeaders,
  policy: GuardPolicy,
): GuardResult<400 | 403> {
  let authority: Authority | null = null;
  if (policy.allowedHosts !== "any") {
    const host = headers.host;
    if (host === undefined || host === "") return MISSING_HOST;
    authority = parseHost(host.toLowerCase());
    if (authority === null) return MALFORMED_HOST;
    const { hostname, port } = authority;
    if (
      !policy.allowedHosts.has(hostname) &&
      (port === "" || !policy.allowedHosts.has(`${hostname}:${port}`))
    )
      return BAD_HOST;
  }
  const origin = headers.origin;
  if (origin === undefined || policy.allowedOrigins === "any") return OK;
  // Browsers send an Origin in one canonical form: anything else (a path, userinfo,
  // `[::1]evil.com`, `null`) is in no set and is not the request's own origin.
  const lower = origin.toLowerCase();
  if (policy.allowedOrigins.has(lower)) return OK;
  return authority !== null && isOwnOrigin(lower, authority) ? OK : BAD_ORIGIN;
}

/**
 * Explains why serving on `host` is refused when it is not loopback and no token is
 * configured (anyone on the network could call every tool), or `undefined` when it is fine.
 */
export function checkNonLoopbackBind(host: string, tokens: number): string | undefined {
  if (tokens > 0 || isLoopbackHost(host)) return undefined;
  return (
    `refusing to listen on ${host} without authentication: anyone who can reach it could call every tool. ` +
    "Add a token with --token <secret> (or `tokens: [{ token: ... }]` in the config), or bind 127.0.0.1."
  );
}

function mediaTypeIs(value: string, start: number, type: string): boolean {
  if (value.length - start < type.length) return false;
  for (let i = 0; i < type.length; i++) {
    // ASCII lowercase without allocating a lowered copy.
    if ((value.charCodeAt(start + i) | 0x20) !== (type.charCodeAt(i) | 0x20)) return false;
  }
  const next = value.charCodeAt(start + type.length);
  return Number.isNaN(next) || next === 59 /* ; */ || next === 32 || next === 9 || next === 44 /* , */;
}

/**
 * A POST body must be `application/json` (parameters such as `charset=utf-8` allowed,
 * case-insensitive); anything else, or none, is 415.
 */
export function checkContentType(header: string | undefined): GuardResult<415> {
  return header !== undefined && mediaTypeIs(header, 0, "application/json") ? OK : BAD_TYPE;
}

/** Whether the media range in `header[start, end)` has `q=0` ("not acceptable"). */
function zeroQuality(header: string, start: number, end: number): boolean {
  const q = header.indexOf("q=0", start);
  if (q < 0 || q >= end) return false;
  for (let i = q + 3; i < end; i++) {
    const c = header.charCodeAt(i);
    if (c === 59 /* ; */ || c === 32 || c === 9) break;
    if (c !== 48 /* 0 */ && c !== 46 /* . */) return false;
  }
  return true;
}

/** Whether the Accept list names `type` (or a wildcard covering it) with a non-zero quality. */
function accepts(header: string, type: string, wildcard: string): boolean {
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(",", start);
    if (end < 0) end = header.length;
    while (start < end && (header.charCodeAt(start) === 32 || header.charCodeAt(start) === 9)) start++;
    const named = mediaTypeIs(header, start, type) || mediaTypeIs(header, start, wildcard);
    if ((named || mediaTypeIs(header, start, "*/*")) && !zeroQuality(header, start, end)) return true;
    start = end + 1;
  }
  return false;
}

const SSE_OK = Object.freeze({ ok: true, sse: true } as const);
const JSON_ONLY = Object.freeze({ ok: true, sse: false } as const);

/**
 * Content negotiation of Streamable HTTP; `sse` says whether the answer may stream.
 * JSON is required unless `needJson: false` (GET listen streams); `needSse: true`
 * also requires `text/event-stream`, as the 2025 spec has clients list both on POST
 * (default `false`: a JSON-only client gets JSON answers). Wildcards (`*\/*`,
 * `application/*`, `text/*`) count, `q=0` refuses. A missing Accept passes (HTTP: "anything";
 * curl and scripts leave it out) with `sse: true`. Otherwise 406.
 */
export function checkAccept(
  header: string | undefined,
  need: { needSse?: boolean; needJson?: boolean } = NEED_JSON,
): { ok: true; sse: boolean } | GuardRefusal<406> {
  if (header === undefined || header === "") return SSE_OK;
  // A client sends the same Accept on every POST: its last answer is kept for the default need.
  if (need === NEED_JSON) {
    if (header === lastAccept.header) return lastAccept.result;
    const result = negotiate(header, need);
    lastAccept = { header, result };
    return result;
  }
  return negotiate(header, need);
}

const NEED_JSON: { needSse?: boolean; needJson?: boolean } = Object.freeze({});
let lastAccept: { header: string; result: { ok: true; sse: boolean } | GuardRefusal<406> } = {
  header: "",
  result: SSE_OK,
};

function negotiate(
  header: string,
  need: { needSse?: boolean; needJson?: boolean },
): { ok: true; sse: boolean } | GuardRefusal<406> {
  const json = need.needJson === false || accepts(header, "application/json", "application/*");
  const sse = accepts(header, "text/event-stream", "text/*");
  if (json && (sse || need.needSse !== true)) return sse ? SSE_OK : JSON_ONLY;
  const wanted = need.needJson === false ? [] : ["application/json"];
  if (need.needSse === true) wanted.push("text/event-stream");
  return refuse(406, `Not Acceptable: Accept must include ${wanted.join(" and ")}`);
}

/** A request refused while being read; `status` is the HTTP status to answer with. */
export class HttpError extends McplexError {
  readonly status: number;

  constructor(status: number, code: McplexErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, { transport: "http" }, options);
    this.status = status;
  }
}

/** The body passed the limit of {@link readBody}: answer 413. */
export class BodyTooLargeError extends HttpError {
  constructor(readonly limit: number) {
    super(413, "INVALID_ARGUMENT", `Payload Too Large: the request body exceeds ${limit} bytes`);
  }
}

/** The body did not arrive in full within the time given to {@link readBody}: answer 408. */
export class BodyTimeoutError extends HttpError {
  constructor(readonly ms: number) {
    super(
      408,
      "REQUEST_TIMEOUT",
      `Request Timeout: the request body did not arrive within ${ms} ms; send it at once`,
    );
  }
}

/** The body grew past what the memory budget had room for: answer 503 with `Retry-After`. */
export class BodyOverBudgetError extends HttpError {
  constructor(message: string) {
    super(503, "MEMORY_BUDGET_FULL", message);
  }
}

/**
 * The body of a request whose body has arrived in full (`req.complete`: Node's parser has
 * pushed all of it, as it has for a small POST one turn of the event loop after its head),
 * read at once: no promise, timer or listeners, as {@link readBody} needs while bytes may
 * still come. `undefined` while it has not all arrived (then use {@link readBody}). Throws
 * {@link BodyTooLargeError} past `limit` and {@link BodyOverBudgetError} when `lease` has no
 * room for it, as {@link readBody} rejects.
 */
export function bufferedBody(
  req: IncomingMessage,
  limit: number,
  budget?: { lease: BudgetLease; overBudget: string },
): Buffer | undefined {
  if (!req.complete || req.destroyed || req.readableFlowing === true) return undefined;
  // Not flowing, so the parser's chunks wait in the stream's buffer: read() returns them all.
  const body = (req.read() as Buffer | null) ?? EMPTY;
  if (body.length > limit) throw new BodyTooLargeError(limit);
  const lease = budget?.lease;
  if (lease !== undefined && body.length > lease.bytes && !lease.grow(body.length - lease.bytes))
    throw new BodyOverBudgetError(budget!.overBudget);
  return body;
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads a request body of at most `limit` bytes. Rejects with {@link BodyTooLargeError}
 * as soon as the limit is passed (at once from Content-Length, else while counting,
 * keeping nothing beyond it), with {@link BodyTimeoutError} when it is not complete within
 * `deadlineMs`, or an {@link HttpError} 400 when the client aborts or `signal` fires. Bytes
 * past what `lease` holds (a body without Content-Length) are taken from it as they come; when
 * it has no room, rejects with {@link BodyOverBudgetError} carrying `overBudget`. After a 413,
 * 408 or 503 the rest of the body is left unread: answer with `Connection: close`.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  signal?: AbortSignal,
  deadlineMs?: number,
  budget?: { lease: BudgetLease; overBudget: string },
): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // A plain timer, cleared on completion: a signal per request would outlive most of them.
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            req.pause();
            done(new BodyTimeoutError(deadlineMs));
          }, deadlineMs);
    const done = (error?: HttpError) => {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      signal?.removeEventListener("abort", onAbort);
      if (error !== undefined) return reject(error);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const aborted = (cause?: unknown) =>
      new HttpError(400, "REQUEST_ABORTED", "request aborted before its body was complete", { cause });
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause(); // the rest stays unread; the 413 answer closes the connection
        return done(new BodyTooLargeError(limit));
      }
      if (
        budget !== undefined &&
        size > budget.lease.bytes &&
        !budget.lease.grow(size - budget.lease.bytes)
      ) {
        req.pause();
        return done(new BodyOverBudgetError(budget.overBudget));
      }
      chunks.push(chunk);
    };
    const onEnd = () => done();
    const onError = (error: Error) => done(aborted(error));
    const onClose = () => (req.complete ? undefined : done(aborted()));
    const onAbort = () => done(aborted(signal?.reason));
    if (signal?.aborted === true || req.destroyed) {
      clearTimeout(timer);
      return reject(aborted(signal?.reason));
    }
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
