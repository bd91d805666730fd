import { Agent, type IncomingMessage, request, type ServerResponse } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { REPLICA_HEADER } from "./replica-credential.js";

/** Headers of one hop only (RFC 9110 7.6.1), never passed on. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  REPLICA_HEADER,
]);

/** How a forwarded request ended, for the metrics and the caller's error. */
export type ForwardOutcome =
  /** The owner answered (whatever its status), and the answer was relayed. */
  | "relayed"
  /** The owner could not be reached: nothing was sent to it. */
  | "unreachable"
  /** The owner went away after the request reached it: what it did is unknown. */
  | "broken";

/** How long reaching another replica may take before it counts as gone. */
const CONNECT_TIMEOUT_MS = 3000;

const agents = { http: new Agent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * Proxies `req` to `target` (the owner's origin), with `credential` in {@link REPLICA_HEADER}:
 * the body given, or else streamed from `req`; the answer, a stream included, relayed as it
 * comes. The client going away aborts the forwarded request (its cancellation, at the owner).
 * Resolves with how it ended; when nothing was relayed, `res` is left for the caller to answer.
 */
export function forwardRequest(
  target: string,
  credential: string,
  req: IncomingMessage,
  res: ServerResponse,
  body?: Buffer,
): Promise<ForwardOutcome> {
  const url = new URL(req.url ?? "/mcp", target);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  }
  headers[REPLICA_HEADER] = credential;
  if (body !== undefined) headers["content-length"] = String(body.length);
  const secure = url.protocol === "https:";
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ForwardOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const out = (secure ? httpsRequest : request)(url, {
      method: req.method,
      headers,
      agent: secure ? agents.https : agents.http,
    });
    let reached = false;
    // A replica gone without a trace (its address now silent) must not hold the request for
    // the kernel's minutes of SYN retries.
    out.once("socket", (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => out.destroy(Object.assign(new Error("connect timeout"), { code: "MCPLEX_CONNECT_TIMEOUT" })),
        CONNECT_TIMEOUT_MS,
      );
      timer.unref();
      socket.once("connect", () => clearTimeout(timer));
      socket.once("close", () => clearTimeout(timer));
    });
    out.once("response", (answer) => {
      reached = true;
      const relayed: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) relayed[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, relayed);
      if (String(answer.headers["content-type"]).startsWith("text/event-stream")) {
        // An SSE answer: its headers go now, and each event as it comes.
        res.flushHeaders();
        answer.pipe(res);
      } else {
        // A JSON one goes whole, in one write with its headers.
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.once("end", () => res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      }
      answer.once("end", () => settle("relayed"));
      answer.once("error", () => {
        res.destroy();
        settle("broken");
      });
      answer.once("aborted", () => {
        res.destroy();
        settle("broken");
      });
    });
    out.once("error", (error: NodeJS.ErrnoException) => {
      if (reached) {
        res.destroy();
        return settle("broken");
      }
      // Refused or unresolvable: the request never reached the owner, so nothing ran there.
      const unsent = [
        "ECONNREFUSED",
        "ENOTFOUND",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "EAI_AGAIN",
        "MCPLEX_CONNECT_TIMEOUT",
      ];
      settle(unsent.includes(error.code ?? "") ? "unreachable" : "broken");
    });
    res.once("close", () => {
      if (!res.writableFinished) out.destroy();
      settle("relayed");
    });
    if (body !== undefined) out.end(body);
    else req.pipe(out);
  });
}
