import type { IncomingMessage, ServerResponse } from "node:http";
import { REPLICA_HEADER } from "./replica-credential.js";
import { ReplicaLink } from "./replica-link.js";

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

const link = new ReplicaLink();
/** Replicas' origins, parsed once each. */
const origins = new Map<string, URL>();

/**
 * Proxies `req` to `target` (the owner's origin), with `credential` in {@link REPLICA_HEADER}
 * and `body` (a GET or DELETE sends none); the answer, a stream included, relayed as it comes.
 * The client going away aborts the forwarded request (its cancellation, at the owner).
 * Resolves with how it ended; when nothing was relayed, `res` is left for the caller to answer.
 */
export function forwardRequest(
  target: string,
  credential: string,
  req: IncomingMessage,
  res: ServerResponse,
  body?: Buffer,
): Promise<ForwardOutcome> {
  const headers: Record<string, string | string[]> = {};
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  }
  headers[REPLICA_HEADER] = credential;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ForwardOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    // A JSON answer goes whole, in one write with its headers; an SSE one as it comes.
    let streaming = false;
    let chunks: Buffer[] = [];
    let origin = origins.get(target);
    if (origin === undefined) {
      origin = new URL(target);
      if (origins.size > 1000) origins.clear();
      origins.set(target, origin);
    }
    const control = link.send(
      origin,
      {
        method: req.method ?? "GET",
        path: req.url ?? "/mcp",
        headers,
        ...(body === undefined ? {} : { body }),
      },
      {
        head(status, answerHeaders) {
          const relayed: string[] = [];
          for (let i = 0; i < answerHeaders.length; i += 2) {
            const name = answerHeaders[i]!;
            if (HOP_BY_HOP.has(name)) continue;
            relayed.push(name, answerHeaders[i + 1]!);
            if (name === "content-type" && answerHeaders[i + 1]!.startsWith("text/event-stream"))
              streaming = true;
          }
          res.writeHead(status, relayed);
          if (streaming) res.flushHeaders();
        },
        data(chunk) {
          if (!streaming) {
            chunks.push(chunk);
            return true;
          }
          // The client reads slower than the owner writes: wait for it.
          if (res.write(chunk)) return true;
          res.once("drain", () => control.resume());
          return false;
        },
        end() {
          if (streaming) res.end();
          else res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
          chunks = [];
          settle("relayed");
        },
        fail(_error, sent) {
          // Once the answer began, the client's half of it cannot be mended: cut it.
          if (res.headersSent) res.destroy();
          settle(sent ? "broken" : "unreachable");
        },
      },
    );
    res.once("close", () => {
      if (settled) return;
      control.abort();
      settle("relayed");
    });
  });
}
