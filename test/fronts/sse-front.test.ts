import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as SSEClientTransportV1 } from "@modelcontextprotocol/sdk/client/sse.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, stdio } from "../support/config.js";
import {
  eventually,
  type InProcessGateway,
  rawHttp,
  resultText,
  serveHttp,
  startGateway,
  yamlConfig,
} from "../support/gateway.js";
import { openStream } from "../support/sse-stream.js";

// The 2024-11-05 HTTP+SSE transport on the gateway (GET /sse, POST /messages?sessionId=), which
// clients configured with `type: sse` still use, behind the same checks as /mcp.

const REV2024 = resolve("test/fixtures/servers/rev2024-server.mjs");
const ALL = "sse-token-all-0123456789";
const ONLY_OLD = "sse-token-old-0123456789";

let gw: InProcessGateway;
let open: HttpFront;
let openOrigin: string;
beforeAll(async () => {
  gw = await startGateway(
    configOf([stdio("old", process.execPath, [REV2024]), stdio("other", process.execPath, [REV2024])], {
      profiles: { old: { servers: ["old"], tools: {} } },
      tokens: [{ token: ALL }, { token: ONLY_OLD, profile: "old" }],
    }),
  );
  open = await gw.addFront({});
  openOrigin = open.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await gw?.stop();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe("the gateway's HTTP+SSE transport", () => {
  it("serves the SDK's SSEClientTransport: lists and calls a tool", async () => {
    const client = new Client({ name: "sse-test", version: "1.0.0" });
    await client.connect(
      new SSEClientTransport(new URL(`${gw.origin}/sse`), { requestInit: { headers: bearer(ALL) } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "old__echo",
        "old__wait",
        "other__echo",
        "other__wait",
      ]);
      const result = await client.callTool({ name: "old__echo", arguments: { text: "over sse" } });
      expect(resultText(result)).toBe("echo: over sse");
    } finally {
      await client.close();
    }
  });

  it("serves an SDK v1 client on SSEClientTransport, as older clients are built", async () => {
    const client = new ClientV1({ name: "sse-v1", version: "1.0.0" });
    await client.connect(new SSEClientTransportV1(new URL(`${openOrigin}/sse`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("old__echo");
      const result = await client.callTool({ name: "other__echo", arguments: { text: "v1" } });
      expect(resultText(result)).toBe("echo: v1");
    } finally {
      await client.close();
    }
  });

  it("serves an SSE client pointed at /mcp (a GET with no Mcp-Session-Id opens an HTTP+SSE session)", async () => {
    const client = new Client({ name: "sse-at-mcp", version: "1.0.0" });
    await client.connect(new SSEClientTransport(new URL(open.url)));
    try {
      const result = await client.callTool({ name: "old__echo", arguments: { text: "at /mcp" } });
      expect(resultText(result)).toBe("echo: at /mcp");
    } finally {
      await client.close();
    }
  });

  it("wants a token when tokens are configured (401), and a token sees its profile's tools", async () => {
    const refused = await rawHttp(`${gw.origin}/sse`, { method: "GET" });
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toBeDefined();
    const client = new Client({ name: "sse-profile", version: "1.0.0" });
    await client.connect(
      new SSEClientTransport(new URL(`${gw.origin}/sse`), { requestInit: { headers: bearer(ONLY_OLD) } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["old__echo", "old__wait"]);
    } finally {
      await client.close();
    }
  });

  it("refuses a POST /messages without the token (401) even for an open session", async () => {
    const stream = await openStream(`${gw.origin}/sse`, bearer(ALL));
    try {
      const endpoint = await stream.endpoint;
      const res = await rawHttp(new URL(endpoint, gw.origin).href, {
        headers: { "content-type": "application/json" },
        body: initialize,
      });
      expect(res.status).toBe(401);
    } finally {
      stream.close();
    }
  });

  it("refuses the messages of an open session once its token is withdrawn (401)", async () => {
    const stream = await openStream(`${gw.origin}/sse`, bearer(ONLY_OLD));
    const endpoint = new URL(await stream.endpoint, gw.origin).href;
    const post = () =>
      rawHttp(endpoint, {
        headers: { "content-type": "application/json", ...bearer(ONLY_OLD) },
        body: initialize,
      });
    try {
      expect((await post()).status).toBe(202);
      gw.front.setTokens([{ token: ALL }]);
      expect((await post()).status).toBe(401);
    } finally {
      gw.front.setTokens([{ token: ALL }, { token: ONLY_OLD, profile: "old" }]);
      stream.close();
    }
  });

  it("refuses a foreign Host or Origin (403) on both endpoints", async () => {
    const badHost = await rawHttp(`${openOrigin}/sse`, { method: "GET", headers: { host: "evil.example" } });
    expect(badHost.status).toBe(403);
    const badOrigin = await rawHttp(`${openOrigin}/sse`, {
      method: "GET",
      headers: { origin: "https://evil.example" },
    });
    expect(badOrigin.status).toBe(403);
    const post = await rawHttp(`${openOrigin}/messages?sessionId=x`, {
      headers: { "content-type": "application/json", origin: "https://evil.example" },
      body: initialize,
    });
    expect(post.status).toBe(403);
  });

  it("keeps each stream's session to itself: answers go to their own stream, another token is refused", async () => {
    const a = await openStream(`${gw.origin}/sse`, bearer(ALL));
    const b = await openStream(`${gw.origin}/sse`, bearer(ALL));
    try {
      const [endpointA, endpointB] = [await a.endpoint, await b.endpoint];
      expect(endpointA).toMatch(/^\/messages\?sessionId=/);
      expect(endpointA).not.toBe(endpointB);
      const post = (endpoint: string, body: object, token = ALL) =>
        rawHttp(new URL(endpoint, gw.origin).href, {
          headers: { "content-type": "application/json", ...bearer(token) },
          body,
        });
      expect((await post(endpointA, initialize)).status).toBe(202);
      expect((await a.next()).id).toBe(1);
      expect((await post(endpointB, { ...initialize, id: "b-1" })).status).toBe(202);
      expect((await b.next()).id).toBe("b-1");
      await post(endpointA, { jsonrpc: "2.0", method: "notifications/initialized" });
      expect((await post(endpointA, { jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(202);
      const listed = await a.next();
      expect(listed.id).toBe(2);
      // b got nothing of a's: its next message is the answer to its own next request.
      await post(endpointB, { jsonrpc: "2.0", id: "b-2", method: "ping" });
      expect((await b.next()).id).toBe("b-2");
      const foreign = await post(endpointA, { jsonrpc: "2.0", id: 3, method: "ping" }, ONLY_OLD);
      expect(foreign.status).toBe(403);
    } finally {
      a.close();
      b.close();
    }
  });

  it("ends the session when its stream closes", async () => {
    const stream = await openStream(`${openOrigin}/sse`);
    const endpoint = new URL(await stream.endpoint, openOrigin).href;
    const send = () =>
      rawHttp(endpoint, { headers: { "content-type": "application/json" }, body: initialize });
    expect((await send()).status).toBe(202);
    stream.close();
    const gone = await eventually(async () => {
      const res = await send();
      return res.status === 404 ? res : undefined;
    });
    expect(JSON.stringify(gone.json)).toMatch(/session/i);
  });

  it("names the fix for a POST without a session or with a body that is not JSON", async () => {
    const noSession = await rawHttp(`${openOrigin}/messages`, {
      headers: { "content-type": "application/json" },
      body: initialize,
    });
    expect(noSession.status).toBe(400);
    expect(noSession.body).toContain("sessionId");
    const stream = await openStream(`${openOrigin}/sse`);
    try {
      const endpoint = new URL(await stream.endpoint, openOrigin).href;
      const broken = await rawHttp(endpoint, { headers: { "content-type": "application/json" }, body: "{" });
      expect(broken.status).toBe(400);
      expect(broken.body).toContain("Parse error");
      // JSON that is no message, and an id still in use: answered, never a dropped connection.
      const post = (body: string) =>
        rawHttp(endpoint, { headers: { "content-type": "application/json" }, body });
      expect((await post("null")).status).toBe(202);
      expect(((await stream.next()).error as { message: string }).message).toContain("Invalid Request");
      expect((await post(JSON.stringify(initialize))).status).toBe(202);
      await stream.next();
      const slow = {
        jsonrpc: "2.0",
        id: "dup",
        method: "tools/call",
        params: { name: "old__wait", arguments: { ms: 60_000 } },
      };
      expect((await post(JSON.stringify(slow))).status).toBe(202);
      const again = await post(JSON.stringify(slow));
      expect(again.status).toBe(400);
      expect(again.body).toContain("already in use");
    } finally {
      stream.close();
    }
  });
});

describe("HTTP+SSE limits", () => {
  it("counts open /sse streams against --max-streams and frees a place when one closes", async () => {
    const limited = await gw.addFront({ maxStreams: 2 });
    const origin = limited.url.replace(/\/mcp$/, "");
    const first = await openStream(`${origin}/sse`, bearer(ALL));
    const second = await openStream(`${origin}/sse`, bearer(ALL));
    try {
      const refused = await openStream(`${origin}/sse`, bearer(ALL));
      refused.close();
      expect(refused.status).toBe(429);
      first.close();
      // The closed stream's place is given back once the gateway sees the close.
      const again = await eventually(async () => {
        const stream = await openStream(`${origin}/sse`, bearer(ALL));
        if (stream.status === 200) return stream;
        stream.close();
        return undefined;
      });
      again.close();
    } finally {
      first.close();
      second.close();
    }
  });

  it("answers a /messages body that does not arrive in time with 408", async () => {
    const limited = await gw.addFront({ bodyTimeoutMs: 200 });
    const origin = limited.url.replace(/\/mcp$/, "");
    const stream = await openStream(`${origin}/sse`, bearer(ALL));
    try {
      const endpoint = await stream.endpoint;
      // Declares a body it never sends.
      const answer = await rawHttp(`${origin}${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "100", ...bearer(ALL) },
        body: "{",
      });
      expect(answer.status).toBe(408);
    } finally {
      stream.close();
    }
  });
});

describe("mcplex serve and HTTP+SSE", () => {
  it("names the /sse endpoint in its banner, and serves it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcplex-sse-"));
    const config = join(dir, "mcplex.yaml");
    await writeFile(config, yamlConfig({ old: { command: process.execPath, args: [REV2024] } }));
    const served = await serveHttp(["--config", config]);
    try {
      const line = served
        .stderr()
        .split("\n")
        .find((l) => l.includes("/sse"));
      expect(line).toContain(`${served.origin}/sse`);
      const client = new Client({ name: "sse-cli", version: "1.0.0" });
      await client.connect(new SSEClientTransport(new URL(`${served.origin}/sse`)));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["old__echo", "old__wait"]);
      await client.close();
    } finally {
      await served.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
