import { setImmediate as nextTurn } from "node:timers/promises";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Authenticator, AuthRequest } from "../../src/fronts/authenticator.js";
import type { CallRequest, Interceptor } from "../../src/hub/call-pipeline.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { configOf, fixture } from "../support/config.js";
import { type InProcessGateway, rawHttp, resultText, startGateway } from "../support/gateway.js";

// Every entry of the HTTP front asks one async Authenticator who is calling, and the identity
// it answers rides on the request: here an authenticator that looks its users up (async, as a
// JWKS or introspection look-up is), and a hub interceptor that reads the identity.

const USERS: Record<string, { key: string; operator: boolean; profile?: string }> = {
  "alice-credential": { key: "user:alice", operator: true },
  "bob-credential": { key: "user:bob", operator: false, profile: "bob" },
};

const asked: string[] = [];
const lookUp: Authenticator = {
  required: true,
  async authenticate(request: AuthRequest) {
    await nextTurn();
    const credential = String(request.headers.authorization ?? "").replace(/^Bearer /, "");
    asked.push(credential);
    const user = USERS[credential];
    if (user === undefined)
      return {
        ok: false,
        status: 401,
        message: "Unauthorized: unknown user",
        wwwAuthenticate: 'Bearer realm="test"',
      };
    const { key, operator, profile } = user;
    return {
      ok: true,
      identity: { key, via: "token", operator, ...(profile === undefined ? {} : { profile }) },
    };
  },
};

const seen: CallRequest[] = [];
const record: Interceptor = (next) => async (request) => {
  seen.push(request);
  return next(request);
};

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([fixture("fx")], { profiles: { bob: { servers: ["fx"], tools: {} } } }), {
    authenticator: lookUp,
  });
  gw.hub.use(record);
});
afterAll(() => gw?.stop());

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function callEcho(transport: Parameters<Client["connect"]>[0], message: string): Promise<string> {
  const client = new Client({ name: "auth-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return resultText(await client.callTool({ name: "fx__echo", arguments: { message } }));
  } finally {
    await client.close();
  }
}

describe("an async Authenticator on the HTTP front", () => {
  it("admits /mcp, /sse and /ws alike, and the identity rides on each request", async () => {
    const headers = bearer("alice-credential");
    expect(
      await callEcho(new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers } }), "m"),
    ).toBe("echo: m");
    expect(
      await callEcho(new SSEClientTransport(new URL(`${gw.origin}/sse`), { requestInit: { headers } }), "s"),
    ).toBe("echo: s");
    expect(await callEcho(new WebSocketClientTransport({ url: gw.wsUrl, headers }), "w")).toBe("echo: w");
    const calls = seen.filter((r) => r.method === "tools/call");
    expect(calls.map((r) => (r.params.arguments as { message: string }).message)).toEqual(["m", "s", "w"]);
    for (const call of calls) {
      expect(call.context.identity).toMatchObject({ key: "user:alice", via: "token" });
      expect(call.context.caller).toBe("user:alice");
    }
  });

  it("refuses an unknown credential on every entry with its own challenge", async () => {
    const bad = bearer("mallory-credential");
    const post = await rawHttp(gw.url, {
      headers: { ...bad, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "initialize", params: {} },
    });
    expect(post.status).toBe(401);
    expect(post.headers["www-authenticate"]).toBe('Bearer realm="test"');
    for (const path of ["/sse", "/dashboard/state", "/metrics", "/readyz"]) {
      const res = await rawHttp(`${gw.origin}${path}`, { method: "GET", headers: bad });
      expect(res.status, path).toBe(401);
    }
    const ws = new WebSocketClientTransport({ url: gw.wsUrl, headers: bad });
    await expect(ws.start()).rejects.toThrow(/401/);
  });

  it("keeps the operator endpoints to identities with operator rights, and the dashboard to a profile's view", async () => {
    for (const path of ["/metrics", "/readyz"]) {
      expect(
        (await rawHttp(`${gw.origin}${path}`, { method: "GET", headers: bearer("bob-credential") })).status,
      ).toBe(403);
      expect(
        (await rawHttp(`${gw.origin}${path}`, { method: "GET", headers: bearer("alice-credential") })).status,
      ).toBe(200);
    }
    const state = await rawHttp(`${gw.origin}/dashboard/state`, {
      method: "GET",
      headers: bearer("bob-credential"),
    });
    expect(state.status).toBe(200);
  });

  it("is asked once per request", async () => {
    asked.length = 0;
    await rawHttp(`${gw.origin}/metrics`, { method: "GET", headers: bearer("alice-credential") });
    expect(asked).toEqual(["alice-credential"]);
  });
});
