/**
 * Malformed-message generation for the gateway fuzz test: a seeded PRNG (so a failure
 * reproduces from its seed) and mutations of valid 2025 and 2026 requests — truncations,
 * wrong types for every field, huge ids, deep nesting, invalid UTF-8, binary garbage, empty
 * bodies, wrong envelope combinations, batches — plus wrong HTTP headers.
 */

import { envelope, REV2026 } from "../support/gateway.js";

/** mulberry32: small, fast, and good enough to pick mutations. */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

type Json = Record<string, unknown>;

/** Valid requests of both generations against the default workspace server (read-only). */
const TEMPLATES: Array<[string, Json | undefined]> = [
  ["tools/list", {}],
  ["tools/call", { name: "workspace__read_file", arguments: { path: "note.txt" } }],
  ["tools/call", { name: "workspace__list_directory", arguments: { path: "." } }],
  ["tools/call", { name: "workspace__read_file", arguments: { path: "../../etc/passwd" } }],
  ["tools/call", { name: "nope__tool", arguments: {} }],
  ["resources/list", {}],
  ["resources/templates/list", {}],
  ["resources/read", { uri: "file:///etc/passwd" }],
  ["prompts/list", {}],
  ["prompts/get", { name: "nope", arguments: { a: "b" } }],
  ["completion/complete", { ref: { type: "ref/prompt", name: "x" }, argument: { name: "a", value: "b" } }],
  ["server/discover", {}],
  [
    "initialize",
    { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
  ],
  ["ping", undefined],
  ["logging/setLevel", { level: "debug" }],
  ["notifications/initialized", undefined],
  ["notifications/cancelled", { requestId: 1, reason: "fuzz" }],
];

/** Method names beside the real ones; never `subscriptions/listen` (a valid one stays open by design). */
const METHODS = [
  ...TEMPLATES.map(([m]) => m),
  "",
  "tools/",
  "TOOLS/LIST",
  "rpc.discover",
  "__proto__",
  "constructor",
  "x".repeat(300),
  "notifications/",
  "sampling/createMessage",
];

/** Values of every JSON type and some awkward ones. */
function anyValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 9 : 12)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, -0, 2 ** 53 + 1, 1e308, -1e308, Number.MIN_VALUE]);
    case 3:
      return "";
    case 4:
      return r.pick(["2.0", "2026-07-28", "\u0000", "\ud800", "=?base64?!!?=", "é".repeat(50), "a\nb"]);
    case 5:
      return "s".repeat(r.int(2000));
    case 6:
      return r.int(1e9);
    case 7:
      return [];
    case 8:
      return {};
    case 9:
      return [anyValue(r, depth + 1), anyValue(r, depth + 1)];
    case 10:
      return { [r.pick(["a", "_meta", "__proto__", "name", "constructor"])]: anyValue(r, depth + 1) };
    default:
      return { name: anyValue(r, depth + 1), arguments: anyValue(r, depth + 1) };
  }
}

function base(r: Rng): { message: Json; rev2026: boolean } {
  const [method, params] = r.pick(TEMPLATES);
  const rev2026 = r.chance(0.5);
  const message: Json = { jsonrpc: "2.0", method };
  if (!method.startsWith("notifications/")) message.id = r.pick([1, 2, 7, "a", "fuzz", r.int(1e6)]);
  if (params !== undefined) message.params = structuredClone(params);
  if (rev2026) message.params = { ...((message.params as Json) ?? {}), _meta: envelope() };
  return { message, rev2026 };
}

/** Paths a mutation may hit. */
const PATHS = [
  ["jsonrpc"],
  ["id"],
  ["method"],
  ["params"],
  ["params", "name"],
  ["params", "arguments"],
  ["params", "arguments", "path"],
  ["params", "uri"],
  ["params", "_meta"],
  ["params", "_meta", "io.modelcontextprotocol/protocolVersion"],
  ["params", "_meta", "io.modelcontextprotocol/clientCapabilities"],
  ["params", "_meta", "progressToken"],
  ["params", "protocolVersion"],
  ["params", "capabilities"],
  ["params", "inputResponses"],
  ["params", "requestState"],
  ["result"],
  ["error"],
];

function setPath(target: Json, path: string[], value: unknown, remove = false): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return;
    const next = (node as Json)[key];
    if (typeof next !== "object" || next === null) (node as Json)[key] = {};
    node = (node as Json)[key];
  }
  if (typeof node !== "object" || node === null) return;
  const last = path.at(-1)!;
  if (remove) delete (node as Json)[last];
  else (node as Json)[last] = value;
}

function deep(r: Rng): string {
  const depth = 100 + r.int(20_000);
  const open = r.chance(0.5) ? "[" : '{"a":';
  const close = open === "[" ? "]" : "}";
  const inner = `${open.repeat(depth)}1${close.repeat(r.chance(0.9) ? depth : r.int(depth))}`;
  return r.chance(0.5)
    ? inner
    : `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"workspace__read_file","arguments":${inner}}}`;
}

/** One fuzz case: the bytes to send and what kind of mutation made them. */
export interface FuzzCase {
  kind: string;
  body: Buffer;
  /** The message before serialisation, when it is one (for HTTP headers). */
  message?: Json;
}

/** A malformed (or, one time in ten, valid) message. */
export function fuzzCase(r: Rng): FuzzCase {
  const { message, rev2026 } = base(r);
  const json = (kind: string, m: unknown = message): FuzzCase => ({
    kind,
    body: Buffer.from(JSON.stringify(m)),
    ...(typeof m === "object" && m !== null && !Array.isArray(m) ? { message: m as Json } : {}),
  });
  switch (r.int(16)) {
    case 0:
      return json("valid");
    case 1: {
      const text = JSON.stringify(message);
      return { kind: "truncated", body: Buffer.from(text.slice(0, r.int(text.length))), message };
    }
    case 2:
    case 3:
      setPath(message, r.pick(PATHS), anyValue(r));
      return json("wrong-type");
    case 4:
      setPath(message, r.pick(PATHS), undefined, true);
      return json("missing-field");
    case 5: {
      const id = r.pick([
        "123456789012345678901234567890",
        "1e999",
        "-1e999",
        "1.7976931348623157e309",
        `"${"i".repeat(100_000)}"`,
        "-0",
        "0.0000001",
      ]);
      const text = JSON.stringify({ ...message, id: "@ID@" }).replace('"@ID@"', id);
      return { kind: "huge-id", body: Buffer.from(text), message };
    }
    case 6:
      return { kind: "deep-nesting", body: Buffer.from(deep(r)) };
    case 7: {
      const text = Buffer.from(JSON.stringify(message));
      const at = r.int(text.length);
      const bad = r.pick([
        [0xff],
        [0xc3],
        [0xed, 0xa0, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0xc0, 0xaf],
        [0x00],
      ]);
      return {
        kind: "invalid-utf8",
        body: Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]),
      };
    }
    case 8:
      return { kind: "garbage", body: r.bytes(r.int(300)) };
    case 9:
      return {
        kind: "empty",
        body: Buffer.from(r.pick(["", " ", "\t", "null", "{}", "[]", '""', "0", "true"])),
      };
    case 10: {
      // Envelope combinations the spec rules out.
      const params = ((message.params as Json | undefined) ?? {}) as Json;
      const variant = r.int(6);
      if (variant === 0)
        params._meta = { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2025-06-18" };
      else if (variant === 1) params._meta = { "io.modelcontextprotocol/protocolVersion": REV2026 };
      else if (variant === 2)
        params._meta = { ...envelope(), "io.modelcontextprotocol/clientCapabilities": [] };
      else if (variant === 3)
        params._meta = { ...envelope(), "io.modelcontextprotocol/protocolVersion": 20260728 };
      else if (variant === 4) {
        message.method = "initialize";
        params._meta = envelope();
      } else params._meta = { ...envelope(), "io.modelcontextprotocol/logLevel": r.pick(["loud", 3, null]) };
      message.params = params;
      return json(`envelope${rev2026 ? "" : "-on-2025"}`);
    }
    case 11:
      return json("batch", [message, base(r).message, r.chance(0.5) ? 1 : null].slice(0, r.int(4)));
    case 12:
      return json(
        "response",
        r.pick([
          { jsonrpc: "2.0", id: "mcplex-1", result: {} },
          { jsonrpc: "2.0", id: 1, error: { code: "x" } },
        ]),
      );
    case 13:
      message.method = r.pick(METHODS);
      return json("method");
    case 14:
      setPath(message, ["params", r.pick(["__proto__", "constructor", "prototype"])], { polluted: true });
      return {
        kind: "proto-keys",
        body: Buffer.from(JSON.stringify(message).replace('"_meta"', '"__proto__":{"x":1},"_meta"')),
        message,
      };
    default:
      setPath(message, r.pick(PATHS), "x".repeat(50_000 + r.int(200_000)));
      return json("big-string");
  }
}

/** Headers for a POST of `c`: mostly right, often wrong in one way. */
export function fuzzHeaders(
  r: Rng,
  c: FuzzCase,
  sessionId: string,
): { method: string; headers: Record<string, string> } {
  const printable = (v: unknown): v is string => typeof v === "string" && /^[\x20-\x7e]*$/.test(v);
  const method = printable(c.message?.method) ? c.message.method : "tools/list";
  const params = c.message?.params as Json | undefined;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": REV2026,
    "mcp-method": method,
  };
  const name = params?.name ?? params?.uri;
  if (printable(name)) headers["mcp-name"] = name;
  if (r.chance(0.2)) headers["mcp-session-id"] = sessionId;
  let verb = "POST";
  if (r.chance(0.35)) {
    switch (r.int(12)) {
      case 0:
        delete headers["content-type"];
        break;
      case 1:
        headers["content-type"] = r.pick([
          "text/plain",
          "application/jsonx",
          "application/json; charset=utf-16",
          "APPLICATION/JSON",
          "*/*",
          "",
        ]);
        break;
      case 2:
        headers.accept = r.pick([
          "text/html",
          "application/json;q=0",
          "text/event-stream",
          "",
          "*/*",
          "application/*;q=0.0",
        ]);
        break;
      case 3:
        headers["mcp-protocol-version"] = r.pick([
          "2025-06-18",
          "garbage",
          "",
          "2099-01-01",
          "=?base64?MjAyNi0wNy0yOA==?=",
        ]);
        break;
      case 4:
        headers["mcp-method"] = r.pick(["", "tools/call", "other", "=?base64?!!?="]);
        break;
      case 5:
        headers["mcp-name"] = r.pick([
          "",
          "wrong",
          "=?base64?d29ya3NwYWNlX19yZWFkX2ZpbGU=?=",
          "=?base64?%%%?=",
        ]);
        break;
      case 6:
        headers["mcp-session-id"] = r.pick(["", "nope", "x".repeat(5000), sessionId]);
        break;
      case 7:
        headers.authorization = r.pick(["Bearer", "Bearer x", "Basic Zm9vOmJhcg==", "bearer    "]);
        break;
      case 8:
        headers.origin = r.pick(["http://evil.example.com", "null", "http://localhost", "file://"]);
        break;
      case 9:
        verb = r.pick(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]);
        break;
      case 10:
        headers["mcp-param-path"] = r.pick(["note.txt", "", "=?base64?!?="]);
        break;
      default:
        delete headers["mcp-protocol-version"];
        delete headers["mcp-method"];
    }
  }
  return { method: verb, headers };
}
