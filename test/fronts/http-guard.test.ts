import * as crypto from "node:crypto";
import { once } from "node:events";
import { type ClientRequest, createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authenticate } from "../../src/fronts/authenticator.js";
import {
  BodyTimeoutError,
  BodyTooLargeError,
  bufferedBody,
  checkAccept,
  checkContentType,
  checkHostAndOrigin,
  checkNonLoopbackBind,
  defaultGuardPolicy,
  type GuardPolicyOptions,
  HttpError,
  isLoopbackHost,
  readBody,
} from "../../src/fronts/http-guard.js";

vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const OK = { ok: true };
const local = defaultGuardPolicy("127.0.0.1", 8420);
const message = (result: { ok: boolean; message?: string }) => result.message;

/** Host, Origin, and the status the loopback policy answers with (200: passes). */
const HOST_CASES: Array<[string | undefined, string | undefined, number]> = [
  ["localhost:8420", undefined, 200],
  ["localhost", undefined, 200],
  ["LOCALHOST:1", undefined, 200],
  // Its own origin: the Host it was reached by (ssh -L, another name), or its port on a loopback name.
  ["127.0.0.1:1234", "http://127.0.0.1:1234", 200],
  ["localhost:3001", "HTTP://LocalHost:3001", 200],
  ["localhost:80", "http://localhost", 200],
  ["localhost", "http://localhost", 200],
  ["127.0.0.1:1234", "http://localhost:8420", 200],
  ["[::1]", undefined, 200],
  // Another local port is another site (a dev server, any page served from localhost).
  ["[::1]:8080", "http://[::1]:3000", 403],
  ["localhost:3001", "http://localhost:5173", 403],
  ["localhost:3001", "http://localhost", 403],
  ["localhost:3001", "http://localhost:30011", 403],
  ["localhost:3001", "http://localhost:300", 403],
  ["localhost:8420", "http://127.0.0.1:5173", 403],
  ["localhost", "http://localhost:80", 403],
  ["evil.example.com", "http://evil.example.com", 403],
  ["evil.example.com:8420", undefined, 403],
  ["localhost.evil.example.com", undefined, 403],
  ["::1", undefined, 400],
  ["[::1", undefined, 400],
  ["localhost:8420", "http://evil.example.com", 403],
  ["localhost:8420", "https://localhost:8420", 403],
  ["localhost:8420", "null", 403],
  ["localhost:8420", "localhost", 403],
  [undefined, undefined, 400],
  ["", "http://localhost", 400],
];

describe("checkHostAndOrigin", () => {
  it.each(HOST_CASES)("on a loopback bind, Host %s with Origin %s → %i", (host, origin, status) => {
    const result = checkHostAndOrigin({ host, origin }, local);
    if (status === 200) expect(result).toEqual(OK);
    else expect(result).toMatchObject({ ok: false, status });
    if (status === 403) expect(message(result)).toMatch(/(Host|Origin) not allowed/);
  });

  it('lets anything through when both are "any", even Origin: null', () => {
    const any = { allowedHosts: "any", allowedOrigins: "any" } as const;
    for (const headers of [{ host: "evil.test", origin: "null" }, {}]) {
      expect(checkHostAndOrigin(headers, any)).toEqual(OK);
    }
  });

  it("matches a host:port entry on that port only, and an origin with a port exactly", () => {
    const policy = { allowedHosts: new Set(["h.test:1"]), allowedOrigins: new Set(["https://o.test:1"]) };
    const ok = (host: string, origin?: string) => checkHostAndOrigin({ host, origin }, policy).ok;
    expect([ok("h.test:1"), ok("h.test:2"), ok("h.test")]).toEqual([true, false, false]);
    expect([ok("h.test:1", "https://o.test:1"), ok("h.test:1", "https://o.test:2")]).toEqual([true, false]);
  });
});

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];
const LOOPBACK_ORIGINS = ["http://localhost:8420", "http://127.0.0.1:8420", "http://[::1]:8420"];
/** Bind address, options, then the hosts and origins of the policy (port 8420). */
const POLICY_CASES: Array<[string, GuardPolicyOptions, string[] | "any", string[] | "any"]> = [
  ["127.0.0.1", {}, LOOPBACK, LOOPBACK_ORIGINS],
  ["::1", {}, LOOPBACK, LOOPBACK_ORIGINS],
  [
    "localhost",
    { allowedOrigins: ["https://A.test:443/"] },
    LOOPBACK,
    ["https://a.test", ...LOOPBACK_ORIGINS],
  ],
  ["0.0.0.0", { tokens: 1 }, "any", "any"],
  ["0.0.0.0", { tokens: 1, allowedOrigins: ["https://app.test"] }, "any", ["https://app.test"]],
  ["0.0.0.0", {}, LOOPBACK, LOOPBACK_ORIGINS], // without a token serving is refused anyway
  ["10.0.0.5", { tokens: 1, allowedHosts: ["M.test"] }, ["m.test", "10.0.0.5"], ["http://10.0.0.5:8420"]],
  ["fe80::1", { allowedHosts: ["mcp.lan"] }, ["mcp.lan", "[fe80::1]"], ["http://[fe80::1]:8420"]],
];

describe("defaultGuardPolicy", () => {
  it.each(POLICY_CASES)("on %s with %o allows hosts %j and origins %j", (bind, options, hosts, origins) => {
    const policy = defaultGuardPolicy(bind, 8420, options);
    expect(policy.allowedHosts).toEqual(hosts === "any" ? "any" : new Set(hosts));
    expect(policy.allowedOrigins).toEqual(origins === "any" ? "any" : new Set(origins));
  });

  it("leaves the default port out of its own origins, as browsers do", () => {
    expect(defaultGuardPolicy("127.0.0.1", 80).allowedOrigins).toEqual(
      new Set(["http://localhost", "http://127.0.0.1", "http://[::1]"]),
    );
  });

  it("refuses an allowed origin that is not scheme://host[:port], naming it", () => {
    for (const entry of [
      "app.example.com",
      "https://app.example.com/app",
      "ftp://x.test",
      "https://u:p@x.test",
    ])
      expect(() => defaultGuardPolicy("127.0.0.1", 8420, { allowedOrigins: [entry] })).toThrow(
        `allowed origin ${JSON.stringify(entry)}`,
      );
  });

  it("serves a configured name and the bracketed IPv6 bind address, and nothing else", () => {
    const policy = defaultGuardPolicy("fe80::1", 9000, { tokens: 1, allowedHosts: ["mcp.test"] });
    const ok = (host: string, origin?: string) => checkHostAndOrigin({ host, origin }, policy).ok;
    expect(ok("mcp.test:9000") && ok("[fe80::1]:9000", "http://[fe80::1]:9000")).toBe(true);
    expect(ok("evil.test:9000")).toBe(false);
  });
});

describe("isLoopbackHost and checkNonLoopbackBind", () => {
  it("knows loopback addresses", () => {
    const loopback = ["localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]", "::ffff:127.0.0.1", "LOCALHOST"];
    expect(loopback.filter((h) => !isLoopbackHost(h))).toEqual([]);
    const other = ["::", "0.0.0.0", "192.168.1.5", "example.com", "128.0.0.1"];
    expect(other.filter((h) => isLoopbackHost(h))).toEqual([]);
  });

  it("refuses a non-loopback bind without tokens and says how to fix it", () => {
    const explanation = checkNonLoopbackBind("0.0.0.0", 0);
    for (const part of ["0.0.0.0", "--token", "tokens:"]) expect(explanation).toContain(part);
  });

  it("accepts loopback binds, and other binds with a token", () => {
    const fine = [checkNonLoopbackBind("127.0.0.1", 0), checkNonLoopbackBind("::1", 0)];
    expect([...fine, checkNonLoopbackBind("0.0.0.0", 1)]).toEqual([undefined, undefined, undefined]);
  });
});

describe("authenticate", () => {
  const tokens = [{ token: "s3cret-alpha" }, { token: "s3cret-beta-longer", profile: "reader" }];

  it("passes every request when no token is configured", () => {
    expect(authenticate(undefined, [])).toEqual(OK);
    expect(authenticate("Bearer whatever", [])).toEqual(OK);
  });

  it("returns the token's profile and a reference that is not the token", () => {
    const result = authenticate("Bearer s3cret-beta-longer", tokens);
    expect(result).toEqual({ ok: true, profile: "reader", token: { index: 1, key: "token#1" } });
    const lowercase = authenticate("bearer s3cret-alpha", tokens);
    expect(lowercase).toEqual({ ok: true, token: { index: 0, key: "token#0" } });
  });

  it("challenges a request without credentials, without an error code", () => {
    for (const header of [undefined, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearerx s3cret-alpha"]) {
      const result = authenticate(header, tokens);
      expect(result).toMatchObject({ ok: false, status: 401, wwwAuthenticate: 'Bearer realm="mcplex"' });
    }
  });

  it("refuses a wrong token with invalid_token and never echoes it", () => {
    const challenge = 'Bearer realm="mcplex", error="invalid_token"';
    for (const wrong of ["s3cret-alphb", "x", "s3cret-alpha-and-more", ""]) {
      const result = authenticate(`Bearer ${wrong}`, tokens);
      expect(result).toMatchObject({ ok: false, status: 401, wwwAuthenticate: challenge });
      if (wrong !== "") expect(message(result)).not.toContain(wrong);
    }
  });

  it("compares fixed-size digests against every configured token, whatever the lengths", () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    spy.mockClear();
    authenticate("Bearer s3cret-alpha", tokens);
    authenticate("Bearer short", tokens);
    const sizes = spy.mock.calls.map(([a, b]) => [(a as Buffer).length, (b as Buffer).length]);
    expect(sizes).toEqual(Array(4).fill([32, 32]));
  });
});

const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"];
const OTHER_TYPES = [undefined, "", "text/plain", "application/jsonx", "application/json-patch+json"];

describe("checkContentType", () => {
  it("accepts application/json with parameters, in any case, and refuses anything else with 415", () => {
    for (const type of JSON_TYPES) expect(checkContentType(type)).toEqual(OK);
    for (const type of OTHER_TYPES) expect(checkContentType(type)).toMatchObject({ ok: false, status: 415 });
  });
});

/** Accept header, requirements, and the outcome: the answer may stream, JSON only, or 406. */
type Need = { needSse?: boolean; needJson?: boolean };
const ACCEPT_CASES: Array<[string | undefined, Need, "sse" | "json" | 406]> = [
  ["application/json, text/event-stream", { needSse: true }, "sse"],
  ["text/event-stream;q=0.9, application/json;q=1", { needSse: true }, "sse"],
  ["*/*", { needSse: true }, "sse"],
  ["application/*, text/*", { needSse: true }, "sse"],
  [undefined, { needSse: true }, "sse"],
  ["", { needSse: true }, "sse"],
  ["application/json", {}, "json"],
  ["application/json;q=0.5", {}, "json"],
  ["text/event-stream", { needSse: true, needJson: false }, "sse"],
  ["application/json", { needSse: true }, 406],
  ["application/json", { needSse: true, needJson: false }, 406],
  ["text/html", {}, 406],
  ["text/event-stream", {}, 406],
  ["application/json;q=0, text/event-stream", {}, 406],
  ["application/json; q=0.0", {}, 406],
  ["application/json, text/event-stream;q=0", { needSse: true }, 406],
];

describe("checkAccept", () => {
  it.each(ACCEPT_CASES)("Accept %s with %o → %s", (header, need, outcome) => {
    const result = checkAccept(header, need);
    if (outcome === 406) expect(result).toMatchObject({ ok: false, status: 406 });
    else expect(result).toEqual({ ok: true, sse: outcome === "sse" });
  });

  it("says in a 406 what the Accept header must include", () => {
    const both = message(checkAccept("text/html", { needSse: true }));
    expect(both).toBe("Not Acceptable: Accept must include application/json and text/event-stream");
    const sse = message(checkAccept("text/html", { needSse: true, needJson: false }));
    expect(sse).toBe("Not Acceptable: Accept must include text/event-stream");
  });
});

describe("readBody over a real HTTP server", () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close().closeAllConnections();
  });

  /** Listens on 127.0.0.1:0, reading one body per request; `read` settles with what readBody gave. */
  async function serve(
    limit: number,
    signal?: (incoming: IncomingMessage) => AbortSignal | undefined,
    deadlineMs?: number,
  ) {
    const server = createServer((req, res) => {
      const answer = (status: number, value: Buffer | HttpError) => {
        server.emit("read", value);
        if (!res.destroyed) res.writeHead(status, { connection: "close" }).end();
      };
      readBody(req, limit, signal?.(req), deadlineMs).then(
        (body) => answer(200, body),
        (e: HttpError) => answer(e.status, e),
      );
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const read = once(server, "read").then(([value]) => value as Buffer | HttpError);
    const post = (headers: Record<string, number> = {}) => {
      const { port } = server.address() as AddressInfo;
      const req = request({ host: "127.0.0.1", port, method: "POST", headers }).on("error", () => {});
      const status = once(req, "response").then(([res]) => (res as IncomingMessage).statusCode, String);
      return { req, status };
    };
    return { read, post };
  }

  it("reads bodies with and without Content-Length, up to exactly the limit, and empty ones", async () => {
    const sized = await serve(11);
    const { req, status } = sized.post({ "content-length": 11 });
    req.end("hello world");
    expect([(await sized.read).toString(), await status]).toEqual(["hello world", 200]);
    const chunked = await serve(10);
    const { req: streaming } = chunked.post();
    streaming.write("12345"); // writing before end() sends the body chunked, without Content-Length
    streaming.end("67890");
    expect((await chunked.read).toString()).toBe("1234567890");
    const empty = await serve(10);
    empty.post({ "content-length": 0 }).req.end();
    expect(await empty.read).toEqual(Buffer.alloc(0));
  });

  it("refuses a declared Content-Length over the limit before reading anything", async () => {
    const { read, post } = await serve(100);
    const { req, status } = post({ "content-length": 5000 });
    req.write("x".repeat(10)); // the rest is never sent: the answer must not wait for it
    expect(await read).toMatchObject({ status: 413, limit: 100, code: "INVALID_ARGUMENT" });
    expect(await status).toBe(413);
  });

  it("refuses a chunked body as soon as it passes the limit, without waiting for its end", async () => {
    const { read, post } = await serve(100);
    const { req, status } = post();
    req.write("x".repeat(60));
    req.write("x".repeat(60)); // 120 > 100, and the request is never ended
    expect(await read).toEqual(new BodyTooLargeError(100)); // "... exceeds 100 bytes"
    expect(await status).toBe(413);
  });

  it("rejects with 400 when the client aborts mid-body", async () => {
    let client: ClientRequest | undefined;
    const { read, post } = await serve(1000, (incoming) => {
      // Drop the connection once the server is reading the body, whatever the timing.
      incoming.once("data", () => setImmediate(() => client?.destroy()));
      return undefined;
    });
    client = post({ "content-length": 100 }).req;
    client.write("x".repeat(10));
    expect(await read).toBeInstanceOf(HttpError);
    expect(await read).toMatchObject({ status: 400, code: "REQUEST_ABORTED" });
  });

  it("rejects with 408 when the body is not complete by its deadline, and not when it is", async () => {
    const { read, post } = await serve(1000, undefined, 200);
    const { req, status } = post({ "content-length": 100 });
    req.write("x".repeat(10)); // the other 90 bytes never come
    expect(await read).toEqual(new BodyTimeoutError(200));
    expect(await status).toBe(408);
    const quick = await serve(1000, undefined, 60_000);
    quick.post({ "content-length": 2 }).req.end("{}");
    expect((await quick.read).toString()).toBe("{}");
  });

  it("rejects with 400 when the signal aborts, or has aborted already", async () => {
    const controller = new AbortController();
    const { read, post } = await serve(1000, (incoming) => {
      incoming.once("data", () => setImmediate(() => controller.abort(new Error("shutting down"))));
      return controller.signal;
    });
    post({ "content-length": 100 }).req.write("x".repeat(10));
    expect(await read).toMatchObject({ status: 400, code: "REQUEST_ABORTED" });
    const early = await serve(1000, () => AbortSignal.abort());
    early.post({ "content-length": 2 }).req.end("{}");
    expect(await early.read).toMatchObject({ status: 400 });
  });
});

describe("bufferedBody over a real HTTP server", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /** A server that reads each body with bufferedBody one turn of the event loop after its head. */
  async function serve(limit: number) {
    const results: Array<Buffer | undefined | Error> = [];
    server = createServer((req, res) => {
      setImmediate(() => {
        try {
          results.push(bufferedBody(req, limit));
        } catch (error) {
          results.push(error as Error);
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const post = async (body: string) => {
      const req = request({
        host: "127.0.0.1",
        port,
        method: "POST",
        headers: { "content-length": body.length },
      });
      req.end(body);
      const [res] = (await once(req, "response")) as [IncomingMessage];
      res.resume();
      await once(res, "end");
    };
    return { results, post };
  }

  it("reads a body that came with its head at once, and refuses one over the limit", async () => {
    const { results, post } = await serve(11);
    await post("hello world");
    await post("hello world!");
    await post("");
    expect(results).toEqual([Buffer.from("hello world"), new BodyTooLargeError(11), Buffer.alloc(0)]);
  });

  it("leaves a body still on its way to readBody", async () => {
    let complete: boolean | undefined;
    let read: Buffer | undefined;
    server = createServer((req, res) => {
      complete = req.complete;
      read = bufferedBody(req, 100);
      req.resume();
      res.end();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const req = request({ host: "127.0.0.1", port, method: "POST", headers: { "content-length": 5 } });
    req.end("12345");
    const [res] = (await once(req, "response")) as [IncomingMessage];
    res.resume();
    expect([complete, read]).toEqual([false, undefined]);
  });
});
