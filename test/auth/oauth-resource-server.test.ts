import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { DEFAULT_DPOP_ALGORITHMS } from "../../src/config/read-auth.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { issuesOf } from "../support/config-errors.js";
import { COMMANDS, postRev2026, rawHttp, resultText, rev2026Request } from "../support/gateway.js";

// The gateway as an OAuth resource server (the `auth:` block), against an issuer that is a
// real HTTP server publishing its metadata and JWKS, and tokens signed with real keys. The
// whole sign-in flow with a real authorization server is in oidc-sign-in.test.ts.

interface TestIssuer {
  readonly url: string;
  /** Requests for the key set so far. */
  jwksFetches: number;
  sign(
    claims: JWTPayload,
    options?: { kid?: string; expiresIn?: string | number; issuer?: string },
  ): Promise<string>;
  close(): Promise<void>;
}

async function startIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  let url = "";
  const issuer: TestIssuer = {
    get url() {
      return url;
    },
    jwksFetches: 0,
    async sign(claims, options = {}) {
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "ES256", kid: options.kid ?? "k1", typ: "at+jwt" })
        .setIssuer(options.issuer ?? url)
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? "5m")
        .sign(privateKey);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/oauth-authorization-server") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    } else if (req.url === "/jwks") {
      issuer.jwksFetches++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [jwk] }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return issuer;
}

const SERVERS = {
  fx: COMMANDS.fixture,
  gh: COMMANDS.fixture,
};

function configText(issuer: string, extra = ""): string {
  const servers = Object.entries(SERVERS)
    .map(
      ([name, s]) =>
        `  ${name}:\n    command: ${JSON.stringify(s.command)}\n    args: ${JSON.stringify(s.args)}`,
    )
    .join("\n");
  return `serve:
  readyWait: 1m
servers:
${servers}
profiles:
  engineering:
    servers: [fx, gh]
  sales:
    servers: [fx]
tokens:
  - token: static-script-token-0123456789abcdef
auth:
  issuers:
    - issuer: ${issuer}
  scopes: [mcp]
  jwksCooldown: 1h
  access:
    - when: { groups: [eng] }
      profile: engineering
    - when: { email: "*@sales.example.com" }
      profile: sales
  require:
    - tools: ["gh__*"]
      scopes: [gh:write]
${extra}`;
}

let issuer: TestIssuer;
let running: RunningGateway;
let origin: string;

beforeAll(async () => {
  issuer = await startIssuer();
  const config = parseConfig(configText(issuer.url), { source: "test.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  origin = running.http!.url.replace(/\/mcp$/, "");
}, 60_000);
afterAll(async () => {
  await running?.close();
  await issuer?.close();
});

const alice = (extra: JWTPayload = {}, expiresIn?: number) =>
  issuer.sign(
    {
      sub: "alice",
      email: "alice@example.com",
      groups: ["eng"],
      scope: "mcp gh:write",
      aud: `${origin}/mcp`,
      client_id: "cli-1",
      ...extra,
    },
    expiresIn === undefined ? {} : { expiresIn },
  );
const sally = () =>
  issuer.sign({
    sub: "sally",
    email: "sally@sales.example.com",
    // An email rule admits only an address the issuer verified.
    email_verified: true,
    groups: [],
    scope: "mcp",
    aud: `${origin}/mcp`,
  });

async function connect(transport: Parameters<Client["connect"]>[0]): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}
const bearer = (token: string) => ({ requestInit: { headers: { authorization: `Bearer ${token}` } } });

describe("the protected-resource metadata (RFC 9728)", () => {
  it("is published for the server and for each endpoint, naming the issuer and the scopes", async () => {
    for (const suffix of ["", "/mcp", "/sse", "/ws"]) {
      const answer = await rawHttp(`${origin}/.well-known/oauth-protected-resource${suffix}`, {
        method: "GET",
      });
      expect(answer.status).toBe(200);
      expect(answer.headers["access-control-allow-origin"]).toBe("*");
      expect(JSON.parse(answer.body)).toEqual({
        resource: `${origin}${suffix}`,
        authorization_servers: [issuer.url],
        scopes_supported: ["mcp", "gh:write"],
        bearer_methods_supported: ["header"],
        resource_name: "mcplex",
        dpop_signing_alg_values_supported: [...DEFAULT_DPOP_ALGORITHMS],
      });
    }
    const other = await rawHttp(`${origin}/.well-known/oauth-protected-resource/dashboard`, {
      method: "GET",
    });
    expect(other.status).toBe(404);
  });
});

describe("admission by access token", () => {
  it("answers a request without a token 401 with a challenge pointing at the endpoint's metadata", async () => {
    for (const [path, suffix] of [
      ["/mcp", "/mcp"],
      ["/sse", "/sse"],
    ] as const) {
      const answer = await rawHttp(`${origin}${path}`, {
        method: path === "/mcp" ? "POST" : "GET",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: path === "/mcp" ? "{}" : undefined,
      });
      expect(answer.status).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe(
        `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource${suffix}", scope="mcp"`,
      );
    }
  });

  it("lets a signed-in user call tools on /mcp, /sse and /ws, seeing their profile", async () => {
    const token = await alice();
    for (const transport of [
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), bearer(token)),
      new SSEClientTransport(new URL(`${origin}/sse`), bearer(token)),
      new WebSocketClientTransport({
        url: running.http!.wsUrl,
        headers: { authorization: `Bearer ${token}` },
      }),
    ]) {
      const client = await connect(transport);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain("fx__echo");
        expect(names).toContain("gh__echo");
        expect(resultText(await client.callTool({ name: "gh__echo", arguments: { message: "hi" } }))).toBe(
          "echo: hi",
        );
      } finally {
        await client.close();
      }
    }
  });

  it("gives a user of another group only their profile's tools", async () => {
    const client = await connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), bearer(await sally())),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("fx__echo");
      expect(names.some((n) => n.startsWith("gh__"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("refuses a user no access rule admits with 403", async () => {
    const token = await issuer.sign({
      sub: "mallory",
      email: "m@elsewhere.example",
      groups: ["x"],
      scope: "mcp",
      aud: `${origin}/mcp`,
    });
    const answer = await postRev2026(`${origin}/mcp`, rev2026Request(1, "tools/list"), {
      authorization: `Bearer ${token}`,
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("no rule of this gateway's auth.access admits you");
  });

  it("answers a token without a scope every call needs 403 insufficient_scope", async () => {
    const token = await alice({ scope: "gh:write" });
    const answer = await postRev2026(`${origin}/mcp`, rev2026Request(1, "tools/list"), {
      authorization: `Bearer ${token}`,
    });
    expect(answer.status).toBe(403);
    expect(answer.headers["www-authenticate"]).toBe(
      'Bearer error="insufficient_scope", scope="gh:write mcp"',
    );
  });

  it("steps up: a tool that needs a scope the token lacks is answered 403 with the scopes to ask for", async () => {
    const token = await alice({ scope: "mcp" });
    const call = (name: string) =>
      postRev2026(`${origin}/mcp`, rev2026Request(7, "tools/call", { name, arguments: { message: "x" } }), {
        authorization: `Bearer ${token}`,
      });
    const refused = await call("gh__echo");
    expect(refused.status).toBe(403);
    expect(refused.headers["www-authenticate"]).toBe(
      `Bearer error="insufficient_scope", scope="mcp gh:write", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(JSON.parse(refused.body).error).toMatchObject({
      code: -32003,
      data: { reason: "insufficient_scope", scope: "mcp gh:write" },
    });
    const allowed = await call("fx__echo");
    expect(allowed.status).toBe(200);
    // A 2025 session's POST is answered the same way; on /ws it is a JSON-RPC error.
    const client = await connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), bearer(token)));
    try {
      await expect(client.callTool({ name: "gh__echo", arguments: { message: "x" } })).rejects.toThrow(
        /Insufficient scope: required "mcp gh:write"/,
      );
    } finally {
      await client.close().catch(() => {});
    }
    const ws = await connect(
      new WebSocketClientTransport({
        url: running.http!.wsUrl,
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    try {
      await expect(ws.callTool({ name: "gh__echo", arguments: { message: "x" } })).rejects.toThrow(
        /gh:write/,
      );
    } finally {
      await ws.close();
    }
  });

  it("refuses tokens for another resource, of another issuer, expired, or with an unknown key; none is a 5xx", async () => {
    const cases: [string, Promise<string> | string][] = [
      ["not for this resource", alice({ aud: "http://127.0.0.1:1/mcp" })],
      [
        "expired",
        issuer.sign(
          { sub: "alice", groups: ["eng"], scope: "mcp", aud: `${origin}/mcp` },
          { expiresIn: Math.floor(Date.now() / 1000) - 120 },
        ),
      ],
      [
        "issuer is not one",
        issuer.sign({ sub: "alice", scope: "mcp", aud: `${origin}/mcp` }, { issuer: "http://127.0.0.1:2" }),
      ],
      [
        "does not publish",
        issuer.sign({ sub: "alice", scope: "mcp", aud: `${origin}/mcp` }, { kid: "unknown" }),
      ],
      ["malformed", "abc.def.ghi"],
      ["not a JWT", "opaque-token-value"],
    ];
    for (const [reason, pending] of cases) {
      const token = await pending;
      const answer = await postRev2026(`${origin}/mcp`, rev2026Request(1, "tools/list"), {
        authorization: `Bearer ${token}`,
      });
      expect(answer.status, reason).toBe(401);
      expect(answer.body, reason).toContain(reason);
      expect(answer.headers["www-authenticate"], reason).toContain('error="invalid_token"');
    }
  });

  it("fetches the key set once, however many tokens with unknown keys arrive within the cooldown", async () => {
    const before = issuer.jwksFetches;
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const token = await issuer.sign(
          { sub: "alice", scope: "mcp", aud: `${origin}/mcp` },
          { kid: `forged-${i}` },
        );
        return postRev2026(`${origin}/mcp`, rev2026Request(1, "tools/list"), {
          authorization: `Bearer ${token}`,
        });
      }),
    );
    expect(answers.every((a) => a.status === 401)).toBe(true);
    expect(issuer.jwksFetches - before).toBe(0);
  });

  it("closes a /ws connection and an SSE stream when the token they opened with expires", async () => {
    const soon = Math.floor(Date.now() / 1000) + 2;
    const token = await alice({}, soon);
    const ws = new WebSocket(running.http!.wsUrl, "mcp", { headers: { authorization: `Bearer ${token}` } });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const stream = await fetch(`${origin}/sse`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const ended = stream.text();
    expect(await closed).toEqual({
      code: 1008,
      reason: "the access token expired; reconnect with a fresh one",
    });
    expect(await ended).toContain("event: endpoint");
    expect(Date.now()).toBeGreaterThanOrEqual(soon * 1000);
  });

  it("keeps the static tokens of the config working beside sign-in", async () => {
    const client = await connect(
      new StreamableHTTPClientTransport(
        new URL(`${origin}/mcp`),
        bearer("static-script-token-0123456789abcdef"),
      ),
    );
    try {
      expect(resultText(await client.callTool({ name: "gh__echo", arguments: { message: "s" } }))).toBe(
        "echo: s",
      );
    } finally {
      await client.close();
    }
  });
});

describe("the auth: block", () => {
  it("names each problem at its path with the fix", () => {
    const issues = issuesOf(`servers: {}\nauth:\n  issuers: []\n  algorithms: [RS256]\n`);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "auth.issuers",
          message: expect.stringContaining("at least one authorization server"),
        }),
        expect.objectContaining({
          path: "auth.algorithms",
          message: expect.stringContaining('unknown key "algorithms"'),
        }),
      ]),
    );
    const more = issuesOf(
      `servers: {}\nauth:\n  resource: https://mcp.example.com/mcp\n  issuers:\n    - issuer: https://login.example.com\n      algorithms: [HS256, none]\n  access:\n    - when: { groups: [a] }\n      profile: nobody\n  require:\n    - scopes: [x]\n`,
    );
    expect(more).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "auth.resource",
          message: expect.stringContaining("names an endpoint (/mcp)"),
        }),
        expect.objectContaining({
          path: "auth.issuers[0].algorithms",
          message: expect.stringContaining("HS256, none not accepted"),
        }),
        expect.objectContaining({
          path: "auth.access[0].profile",
          message: expect.stringContaining('names no profile "nobody"'),
        }),
        expect.objectContaining({
          path: "auth.require[0]",
          message: expect.stringContaining("selects nothing"),
        }),
      ]),
    );
  });

  it("names the problems of rules and introspection across several issuers at their paths", () => {
    const issues = issuesOf(`servers: {}
auth:
  issuers:
    - issuer: https://a.example.com
      introspection: { clientId: rs }
    - issuer: https://b.example.com
      introspection: { clientId: rs }
    - issuer: https://c.example.com
      introspection: { clientId: rs, prefix: c_ }
    - issuer: https://d.example.com
      introspection: { clientId: rs, prefix: c_d_ }
  access:
    - when: { groups: [a] }
    - when: { issuer: https://z.example.com }
    - when: { issuer: https://a.example.com, client: bot, sub: root }
    - when: { issuer: https://a.example.com, email: "@example.com" }
    - when: { issuer: https://a.example.com, unverifiedEmail: true }
`);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "auth.access[0].when.issuer",
          message: expect.stringContaining("is required when auth.issuers lists several"),
        }),
        expect.objectContaining({
          path: "auth.access[1].when.issuer",
          message: expect.stringContaining("https://z.example.com is not one of auth.issuers"),
        }),
        expect.objectContaining({
          path: "auth.access[2].when",
          message: expect.stringContaining("write one rule for the machine caller and one for users"),
        }),
        expect.objectContaining({
          path: "auth.access[3].when.email[0]",
          message: expect.stringContaining('such as "*@example.com"'),
        }),
        expect.objectContaining({
          path: "auth.access[4].when.unverifiedEmail",
          message: expect.stringContaining("give email too"),
        }),
        expect.objectContaining({
          path: "auth.issuers[1].introspection.prefix",
          message: expect.stringContaining("auth.issuers[0].introspection already takes the opaque tokens"),
        }),
        expect.objectContaining({
          path: "auth.issuers[2].introspection.prefix",
          message: expect.stringContaining("overlaps auth.issuers[3].introspection.prefix"),
        }),
      ]),
    );
  });
});
