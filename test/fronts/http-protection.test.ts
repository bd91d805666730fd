import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, fixture } from "../support/config.js";
import {
  envelope,
  type InProcessGateway,
  postRev2026,
  type RawResponse,
  REV2026,
  rawHttp,
  resultText,
  rev2026Headers,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// What the HTTP front refuses, and how: tokens and profiles, DNS-rebinding protection,
// content negotiation, limits, sessions and JSON-RPC errors — each answer precise, and the
// gateway still serving afterwards.

let dir: string;
let gw: InProcessGateway;
/** No tokens, a 2 KiB body limit: where the error cases run. */
let open: HttpFront;
/** No tokens, a burst of two requests and then 429. */
let limited: HttpFront;

const ALL = "all-the-tools-secret";
const FILES = "files-only-secret";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-guard-"));
  await writeFile(join(dir, "note.txt"), "a note");
  const files = {
    name: "files",
    transport: "workspace",
    root: dir,
    allowWrite: false,
    rules: [],
    enabled: true,
    timeout: 10_000,
    startTimeout: 20_000,
    lazy: false,
    tools: {},
  } as ServerConfig;
  gw = await startGateway(
    configOf([fixture("fx"), files], {
      profiles: { files: { servers: ["files"], tools: {} } },
      tokens: [{ token: ALL }, { token: FILES, profile: "files" }],
    }),
  );
  open = await gw.addFront({ maxBodyBytes: 2048 });
  limited = await gw.addFront({ rateLimit: { perSecond: 0.01, burst: 2 } });
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

const echo = (id: number | string, message = "fine") =>
  rev2026Request(id, "tools/call", { name: "fx__echo", arguments: { message } });

/** A correct 2026 call on `url` still answers correctly. */
async function expectStillServing(url = open.url, headers: Record<string, string> = {}): Promise<void> {
  const res = await postRev2026(url, echo("alive"), headers);
  expect(res.status).toBe(200);
  expect(resultText((res.json as { result: unknown }).result)).toBe("echo: fine");
}

function rpcError(res: RawResponse): { id: unknown; code: number; message: string } {
  const body = res.json as { id: unknown; error: { code: number; message: string } };
  return { id: body.id, code: body.error?.code, message: body.error?.message };
}

async function sdkClient(token: string): Promise<Client> {
  const client = new Client(
    { name: "guard-test", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe("tokens and profiles", () => {
  it("refuses a request without a token with 401 and WWW-Authenticate", async () => {
    const res = await rawHttp(gw.url, { headers: rev2026Headers(echo(1)), body: echo(1) });
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="mcplex"');
    expect(rpcError(res).message).toMatch(/Authorization: Bearer/);
  });

  it("refuses a wrong token with 401 and error=invalid_token, without echoing it", async () => {
    const res = await rawHttp(gw.url, {
      headers: { ...rev2026Headers(echo(1)), authorization: "Bearer not-the-secret" },
      body: echo(1),
    });
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="mcplex", error="invalid_token"');
    expect(res.body).not.toContain("not-the-secret");
  });

  it("serves every tool to a token bound to no profile", async () => {
    const client = await sdkClient(ALL);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("fx__echo");
      expect(names).toContain("files__read_file");
    } finally {
      await client.close();
    }
  });

  it("shows a profile-bound token only its profile's tools and refuses the others with -32602", async () => {
    const client = await sdkClient(FILES);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("files__read_file");
      expect(names.filter((n) => !n.startsWith("files__"))).toEqual([]);
      expect(
        resultText(await client.callTool({ name: "files__read_file", arguments: { path: "note.txt" } })),
      ).toContain("a note");
      await expect(client.callTool({ name: "fx__echo", arguments: { message: "x" } })).rejects.toThrow(
        /Unknown tool: fx__echo/,
      );
    } finally {
      await client.close();
    }
    const raw = await postRev2026(gw.url, echo(5), { authorization: `Bearer ${FILES}` });
    expect(raw.status).toBe(200);
    expect(rpcError(raw)).toMatchObject({ id: 5, code: -32602 });
  });

  it("refuses to drop the last token of a non-loopback front, and keeps the old ones", async () => {
    const wide = await gw.addFront({ host: "0.0.0.0", tokens: [{ token: ALL }] });
    const url = wide.url.replace("0.0.0.0", "127.0.0.1");
    expect(() => wide.setTokens([])).toThrow(/tokens not changed: refusing to listen on 0\.0\.0\.0/);
    await expectStillServing(url, { authorization: `Bearer ${ALL}` });
    expect((await postRev2026(url, echo(6))).status).toBe(401);
    wide.setTokens([{ token: FILES, profile: "files" }]);
    expect((await postRev2026(url, echo(7), { authorization: `Bearer ${ALL}` })).status).toBe(401);
    expect(rpcError(await postRev2026(url, echo(8), { authorization: `Bearer ${FILES}` }))).toMatchObject({
      id: 8,
      code: -32602,
    });
  });
});

describe("DNS rebinding protection", () => {
  const port = () => new URL(open.url).port;

  it("refuses a foreign Host with 403", async () => {
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), host: "evil.example.com" },
      body: echo(1),
    });
    expect(res.status).toBe(403);
    expect(rpcError(res).message).toMatch(/Host not allowed/);
    const withPort = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), host: `evil.example.com:${port()}` },
      body: echo(1),
    });
    expect(withPort.status).toBe(403);
  });

  it("refuses a foreign Origin with 403", async () => {
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), origin: "http://evil.example.com" },
      body: echo(1),
    });
    expect(res.status).toBe(403);
    expect(rpcError(res).message).toMatch(/Origin not allowed/);
  });

  it.each(["localhost", "127.0.0.1", "[::1]"])("accepts Host and Origin %s", async (name) => {
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), host: `${name}:${port()}`, origin: `http://${name}:${port()}` },
      body: echo(1),
    });
    expect(res.status).toBe(200);
    expect(resultText((res.json as { result: unknown }).result)).toBe("echo: fine");
  });
});

/** Opens a 2025 session on the open front; returns its id. */
async function session(capabilities: Record<string, unknown> = {}): Promise<string> {
  const init = await rawHttp(open.url, {
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } },
    },
  });
  expect(init.status).toBe(200);
  const id = init.headers["mcp-session-id"] as string;
  const initialized = await rawHttp(open.url, {
    headers: { "content-type": "application/json", accept: "application/json", "mcp-session-id": id },
    body: { jsonrpc: "2.0", method: "notifications/initialized" },
  });
  expect(initialized.status).toBe(202);
  return id;
}

const JSON_ONLY = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("HTTP and JSON-RPC errors", () => {
  it("refuses a body over the limit with 413", async () => {
    const big = echo(1, "x".repeat(4096));
    const res = await rawHttp(open.url, { headers: rev2026Headers(big), body: big });
    expect(res.status).toBe(413);
    expect(rpcError(res).message).toMatch(/Payload Too Large: the limit is 2048 bytes/);
    await expectStillServing();
  });

  it("refuses a Content-Type other than JSON with 415", async () => {
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), "content-type": "text/plain" },
      body: JSON.stringify(echo(1)),
    });
    expect(res.status).toBe(415);
    await expectStillServing();
  });

  it("refuses an Accept without JSON with 406", async () => {
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(echo(1)), accept: "text/html" },
      body: echo(1),
    });
    expect(res.status).toBe(406);
    expect(rpcError(res).message).toMatch(/application\/json/);
    await expectStillServing();
  });

  it("answers an unknown session id with 404 and -32001", async () => {
    const res = await rawHttp(open.url, {
      headers: { ...JSON_ONLY, "mcp-session-id": "no-such-session" },
      body: { jsonrpc: "2.0", id: 3, method: "tools/list" },
    });
    expect(res.status).toBe(404);
    expect(rpcError(res)).toMatchObject({ id: 3, code: -32001 });
    await expectStillServing();
  });

  it("refuses a 2025 request without a session with 400", async () => {
    const res = await rawHttp(open.url, {
      headers: JSON_ONLY,
      body: { jsonrpc: "2.0", id: 4, method: "tools/list" },
    });
    expect(res.status).toBe(400);
    expect(rpcError(res).message).toMatch(/Mcp-Session-Id/);
    await expectStillServing();
  });

  it("answers malformed JSON with 400 and -32700", async () => {
    const res = await rawHttp(open.url, {
      headers: rev2026Headers(echo(1)),
      body: '{"jsonrpc":"2.0","id":1,',
    });
    expect(res.status).toBe(400);
    expect(rpcError(res)).toMatchObject({ id: null, code: -32700 });
    await expectStillServing();
  });

  it("answers a message that is not JSON-RPC 2.0 with 400 and -32600", async () => {
    for (const body of ['{"jsonrpc":"1.0","id":1,"method":"tools/list"}', "42", '"text"', "null"]) {
      const res = await rawHttp(open.url, { headers: JSON_ONLY, body });
      expect(res.status, body).toBe(400);
      expect(rpcError(res).code, body).toBe(-32600);
    }
    await expectStillServing();
  });

  it("answers a batch with 400 and -32600", async () => {
    const res = await rawHttp(open.url, { headers: JSON_ONLY, body: [echo(1), echo(2)] });
    expect(res.status).toBe(400);
    expect(rpcError(res)).toMatchObject({ code: -32600, message: expect.stringMatching(/batch/) });
    await expectStillServing();
  });

  it("answers an unknown 2026 method with 404 and -32601, echoing the id", async () => {
    const res = await postRev2026(open.url, rev2026Request("m-1", "tools/frobnicate"));
    expect(res.status).toBe(404);
    expect(rpcError(res)).toMatchObject({ id: "m-1", code: -32601 });
    await expectStillServing();
  });

  it("answers invalid 2026 params with -32602: envelope at 400, arguments in band", async () => {
    const noCaps = {
      jsonrpc: "2.0" as const,
      id: 7,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": REV2026 } },
    };
    const envelopeError = await rawHttp(open.url, { headers: rev2026Headers(noCaps), body: noCaps });
    expect(envelopeError.status).toBe(400);
    expect(rpcError(envelopeError)).toMatchObject({ id: 7, code: -32602 });
    const badArgs = rev2026Request(8, "tools/call", { name: "fx__echo", arguments: "not an object" });
    const argsError = await postRev2026(open.url, badArgs);
    expect(argsError.status).toBe(200);
    expect(rpcError(argsError)).toMatchObject({ id: 8, code: -32602 });
    await expectStillServing();
  });

  it("answers an unsupported 2026 version with 400 and -32022 naming the supported ones", async () => {
    const old = {
      jsonrpc: "2.0" as const,
      id: 9,
      method: "tools/list",
      params: {
        _meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
      },
    };
    const res = await rawHttp(open.url, {
      headers: { ...rev2026Headers(old), "mcp-protocol-version": "2099-01-01" },
      body: old,
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      id: 9,
      error: { code: -32022, data: { supported: [REV2026], requested: "2099-01-01" } },
    });
  });

  describe("inside a 2025 session", () => {
    let sessionId: string;
    const post = (body: unknown) =>
      rawHttp(open.url, { headers: { ...JSON_ONLY, "mcp-session-id": sessionId }, body: body as object });
    beforeAll(async () => {
      sessionId = await session();
    });

    it("answers an unknown method in band with -32601", async () => {
      const res = await post({ jsonrpc: "2.0", id: 20, method: "tools/frobnicate" });
      expect(res.status).toBe(200);
      expect(rpcError(res)).toMatchObject({ id: 20, code: -32601 });
    });

    it("answers params that are not an object with -32602", async () => {
      const res = await post({ jsonrpc: "2.0", id: 21, method: "tools/call", params: [1, 2] });
      expect(res.status).toBe(200);
      expect(rpcError(res)).toMatchObject({ id: 21, code: -32602 });
    });

    it("answers an unknown tool with -32602", async () => {
      const res = await post({ jsonrpc: "2.0", id: 22, method: "tools/call", params: { name: "fx__none" } });
      expect(res.status).toBe(200);
      expect(rpcError(res)).toMatchObject({ id: 22, code: -32602 });
    });

    it("answers a message with neither method nor result with 400 and -32600", async () => {
      const res = await post({ jsonrpc: "2.0", id: 23 });
      expect(res.status).toBe(400);
      expect(rpcError(res).code).toBe(-32600);
    });

    it.each([
      ["null", null],
      ["an object", { n: 1 }],
      ["a boolean", true],
    ])(
      "answers a request whose id is %s with 400 and -32600 instead of leaving the POST open",
      async (_l, id) => {
        const res = await rawHttp(open.url, {
          headers: { ...JSON_ONLY, "mcp-session-id": sessionId },
          body: { jsonrpc: "2.0", id, method: "tools/list" },
          timeoutMs: 2000,
        });
        expect(res.status).toBe(400);
        expect(rpcError(res)).toMatchObject({ id: null, code: -32600 });
      },
    );

    it("does not leave a JSON-only POST hanging when the upstream needs the client's input", async () => {
      // The session declared elicitation but calls over a POST that accepts JSON only, with no GET
      // stream open: the server request cannot reach it, so the call must end rather than wait.
      const elicitingSession = await session({ elicitation: {} });
      const res = await rawHttp(open.url, {
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "mcp-session-id": elicitingSession,
        },
        body: {
          jsonrpc: "2.0",
          id: 30,
          method: "tools/call",
          params: { name: "fx__ask_name", arguments: {} },
        },
        timeoutMs: 5000,
      });
      expect(res.status).toBe(200);
      expect((res.json as { id: unknown }).id).toBe(30);
    });

    it("still serves the session after its errors", async () => {
      const res = await post({
        jsonrpc: "2.0",
        id: 24,
        method: "tools/call",
        params: { name: "fx__echo", arguments: { message: "session" } },
      });
      expect(res.status).toBe(200);
      expect(resultText((res.json as { result: unknown }).result)).toBe("echo: session");
    });
  });
});

describe("initialize with an invalid id", () => {
  it("is answered with 400 and -32600 and opens no session", async () => {
    const res = await rawHttp(open.url, {
      headers: JSON_ONLY,
      body: {
        jsonrpc: "2.0",
        id: null,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      },
      timeoutMs: 2000,
    });
    expect(res.status).toBe(400);
    expect(rpcError(res).code).toBe(-32600);
    expect(res.headers["mcp-session-id"]).toBeUndefined();
    await expectStillServing();
  });

  it("answers initialize sent as a notification (no id) with 400 at once, opening no session", async () => {
    // Found by the full-size fuzz run: it opened a session and left the POST unanswered.
    const res = await rawHttp(open.url, {
      headers: JSON_ONLY,
      body: { jsonrpc: "2.0", method: "initialize", params: { requestId: 1, reason: "fuzz" } },
      timeoutMs: 2000,
    });
    expect(res.status).toBe(400);
    expect(rpcError(res).message).toMatch(/initialize is a request and needs an id/);
    expect(res.headers["mcp-session-id"]).toBeUndefined();
    await expectStillServing();
  });
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After past the burst, and other fronts keep serving", async () => {
    for (let i = 0; i < 2; i++) {
      const res = await postRev2026(limited.url, echo(i));
      expect(res.status).toBe(200);
    }
    const refused = await postRev2026(limited.url, echo(3));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(rpcError(refused).message).toMatch(/Too Many Requests/);
    await expectStillServing(open.url);
    await expectStillServing(gw.url, { authorization: `Bearer ${ALL}` });
  });
});
