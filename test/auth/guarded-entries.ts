/**
 * The entries of the HTTP front the authenticator guards, as requests a client sends to them
 * (forged-tokens.hostile.test.ts): /mcp (2026, a 2025 initialize, a user's 2025 session), /sse
 * and /messages, the /ws upgrade, the dashboard and its connections API, /metrics and /readyz; and the two ways such a
 * request goes out with a credential of forged-token-kinds.ts: Node's HTTP client, or byte for
 * byte on a socket for the header bytes that client refuses to write.
 */
import { randomBytes } from "node:crypto";
import { type Agent, type IncomingHttpHeaders, request } from "node:http";
import { connect } from "node:net";
import { rawHttp, rev2026Headers, rev2026Request } from "../support/gateway.js";
import type { Forged } from "./forged-token-kinds.js";

/** One entry the authenticator guards, as a request a client would send. */
export interface Target {
  readonly name: string;
  readonly method: "GET" | "POST";
  /** With its query, if any. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** A WebSocket upgrade. */
  readonly upgrade?: boolean;
  /** The endpoint whose metadata a 401 points to (RFC 9728). */
  readonly metadata: "" | "/mcp" | "/sse" | "/ws";
  /** What a valid token gets here: the request is right, so a 401 is the credential's doing. */
  readonly admitted: number | "upgraded";
}

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const REV2025 = "2025-11-25";

/**
 * Every entry: /mcp (a 2026 call, a 2025 initialize, a call and the stream of a user's 2025
 * `session`), /sse, the `/messages` path of a user's SSE session, /ws, the dashboard's state,
 * events and an action, /metrics and /readyz.
 */
export function targetsOf(session: string, messages: string): Target[] {
  const call2026 = rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "forged" } });
  const call2025 = {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "fx__echo", arguments: { message: "forged" } },
  };
  const inSession = { ...JSON_HEADERS, "mcp-session-id": session, "mcp-protocol-version": REV2025 };
  return [
    {
      name: "POST /mcp (2026)",
      method: "POST",
      path: "/mcp",
      headers: rev2026Headers(call2026),
      body: JSON.stringify(call2026),
      metadata: "/mcp",
      admitted: 200,
    },
    {
      name: "POST /mcp initialize (2025)",
      method: "POST",
      path: "/mcp",
      headers: JSON_HEADERS,
      body: JSON.stringify(initialize(3)),
      metadata: "/mcp",
      admitted: 200,
    },
    {
      name: "POST /mcp in a user's 2025 session",
      method: "POST",
      path: "/mcp",
      headers: inSession,
      body: JSON.stringify(call2025),
      metadata: "/mcp",
      admitted: 200,
    },
    {
      name: "GET /mcp, a user's 2025 session stream",
      method: "GET",
      path: "/mcp",
      headers: { ...inSession, accept: "text/event-stream" },
      metadata: "/mcp",
      admitted: 200,
    },
    {
      name: "GET /sse",
      method: "GET",
      path: "/sse",
      headers: { accept: "text/event-stream" },
      metadata: "/sse",
      admitted: 200,
    },
    {
      name: "POST /messages of a user's session",
      method: "POST",
      path: messages,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call2025),
      metadata: "/sse",
      admitted: 202,
    },
    {
      name: "GET /ws (upgrade)",
      method: "GET",
      path: "/ws",
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        "sec-websocket-protocol": "mcp",
      },
      upgrade: true,
      metadata: "/ws",
      admitted: "upgraded",
    },
    {
      name: "GET /dashboard/state",
      method: "GET",
      path: "/dashboard/state",
      headers: {},
      metadata: "",
      admitted: 200,
    },
    {
      name: "GET /dashboard/events",
      method: "GET",
      path: "/dashboard/events",
      headers: { accept: "text/event-stream" },
      metadata: "",
      admitted: 200,
    },
    // An action that does not exist: admitted, then 404; nothing is done.
    {
      name: "POST /dashboard action",
      method: "POST",
      path: "/dashboard/servers/fx/nosuch",
      headers: { "content-type": "application/json" },
      body: "",
      metadata: "",
      admitted: 404,
    },
    // The per-user connections' API: admitted, then 501, as this gateway keeps no per-user credentials.
    {
      name: "GET /api/connections",
      method: "GET",
      path: "/api/connections",
      headers: {},
      metadata: "",
      admitted: 501,
    },
    { name: "GET /api/users", method: "GET", path: "/api/users", headers: {}, metadata: "", admitted: 501 },
    { name: "GET /metrics", method: "GET", path: "/metrics", headers: {}, metadata: "", admitted: 200 },
    { name: "GET /readyz", method: "GET", path: "/readyz", headers: {}, metadata: "", admitted: 200 },
  ];
}

function initialize(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: REV2025, capabilities: {}, clientInfo: { name: "forged-run", version: "1" } },
  };
}

/** An answer: its status, `upgraded` (a WebSocket was opened) or `reset` (the connection closed unanswered). */
export interface Answer {
  readonly status: number | "upgraded" | "reset";
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Sends `forged` to `target` with Node's HTTP client (kept-alive connections unless it is an upgrade). */
export function send(origin: string, target: Target, forged: Forged, agent: Agent): Promise<Answer> {
  if (forged.rawLines !== undefined) return sendRaw(origin, target, forged);
  const path =
    forged.query === undefined
      ? target.path
      : `${target.path}${target.path.includes("?") ? "&" : "?"}${forged.query}`;
  const headers: Record<string, string | string[]> = { ...target.headers };
  for (const [name, value] of Object.entries(forged.headers))
    headers[name] = typeof value === "string" ? value : [...value];
  let body = target.body;
  if (forged.body !== undefined && target.method === "POST") {
    body = forged.body.text;
    headers["content-type"] = forged.body.type;
  }
  return new Promise((done) => {
    let settled = false;
    const settle = (answer: Answer) => {
      if (settled) return;
      settled = true;
      done(answer);
    };
    const req = request(`${origin}${path}`, {
      method: target.method,
      headers,
      agent: target.upgrade === true ? false : agent,
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      // A stream that was let in stays open: its head is the answer.
      if (status < 300 && String(res.headers["content-type"]).startsWith("text/event-stream")) {
        settle({ status, headers: res.headers, body: "" });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        settle({ status, headers: res.headers, body: Buffer.concat(chunks).toString("latin1") }),
      );
      res.on("error", (error) => settle({ status: "reset", headers: {}, body: error.message }));
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      settle({ status: "upgraded", headers: res.headers, body: "" });
    });
    req.on("error", (error) => settle({ status: "reset", headers: {}, body: error.message }));
    req.setTimeout(30_000, () => req.destroy(new Error("no answer within 30 s")));
    req.end(target.method === "POST" ? body : undefined);
  });
}

/** Writes the request byte for byte on a socket: header bytes Node's client would refuse to send. */
function sendRaw(origin: string, target: Target, forged: Forged): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  const body = target.method === "POST" ? (target.body ?? "") : "";
  const head = [
    `${target.method} ${target.path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    ...Object.entries(target.headers).map(([name, value]) => `${name}: ${value}`),
    ...(target.upgrade === true ? [] : ["Connection: close"]),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ].join("\r\n");
  return new Promise((done) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (fallback: string) => {
      if (settled) return;
      settled = true;
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) return done({ status: "reset", headers: {}, body: fallback });
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
      const headers: IncomingHttpHeaders = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const status = Number(statusLine!.split(" ")[1]);
      done({ status: status === 101 ? "upgraded" : status, headers, body: text.slice(end + 4) });
    };
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      // Let in: its head is the answer (a stream or a WebSocket would stay open).
      const text = Buffer.concat(chunks).toString("latin1");
      if (/^HTTP\/1\.1 [12]\d\d /.test(text) && text.includes("\r\n\r\n")) {
        settle("");
        socket.destroy();
      }
    });
    socket.on("end", () => settle("closed without an answer"));
    socket.on("close", () => settle("closed without an answer"));
    socket.on("error", (error) => settle(error.message));
    socket.setTimeout(30_000, () => socket.destroy(new Error("no answer within 30 s")));
    socket.write(Buffer.from(`${head}\r\n${forged.rawLines}\r\n${body}`, "latin1"));
  });
}

/** The text of a refusal, whichever front wrote it (a JSON-RPC error, `{ error }`, or Node's empty body). */
export function messageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: string | { message?: string } };
    return typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? body);
  } catch {
    return body;
  }
}

/** Opens a user's 2025 session on /mcp: its id. */
export async function openSession(origin: string, token: string): Promise<string> {
  const auth = { authorization: `Bearer ${token}` };
  const init = await rawHttp(`${origin}/mcp`, { headers: { ...JSON_HEADERS, ...auth }, body: initialize(1) });
  const session = init.headers["mcp-session-id"];
  if (init.status !== 200 || typeof session !== "string")
    throw new Error(`a 2025 initialize was answered ${init.status} without a session: ${init.body}`);
  const initialized = await rawHttp(`${origin}/mcp`, {
    headers: { ...JSON_HEADERS, ...auth, "mcp-session-id": session, "mcp-protocol-version": REV2025 },
    body: { jsonrpc: "2.0", method: "notifications/initialized" },
  });
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized was answered ${initialized.status}`);
  return session;
}

/**
 * Opens a user's 2024-11-05 SSE session: the `/messages?sessionId=` path its endpoint event
 * names. `auth`: a bearer token, or the headers that sign the request in (a DPoP proof's).
 */
export function openSseSession(
  origin: string,
  auth: string | Record<string, string>,
): Promise<{ messages: string; close(): void }> {
  const headers = typeof auth === "string" ? { authorization: `Bearer ${auth}` } : auth;
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/sse`, { headers: { accept: "text/event-stream", ...headers } });
    req.on("response", (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /sse answered ${res.statusCode}`));
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const match = /event: endpoint\ndata: (\S+)\n/.exec(text);
        if (match !== null) resolve({ messages: match[1]!, close: () => req.destroy() });
      });
    });
    req.on("error", reject);
    req.end();
  });
}
