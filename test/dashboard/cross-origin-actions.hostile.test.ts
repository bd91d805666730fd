import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  type RawResponse,
  rawHttp,
  rev2026Headers,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";

// The attack (issue 23, point 2): a token-less gateway took
// `curl -X POST -H 'Origin: http://localhost:9999' -H 'Content-Type: text/plain' .../dashboard/servers/alpha/disable`
// and disabled alpha, since the Origin check let any port of a loopback name in. A browser sends
// such a request without a preflight, so any page served from another local port (a dev server)
// could act. Origins now match exactly, scheme, host and port, and an action must be JSON,
// which no other site can send without a preflight.

const NAMES = ["localhost", "127.0.0.1", "[::1]"];
/** A plain node stdio server with an `echo` tool: quick to restart when the test disables it. */
const ECHO_SERVER = resolve("test/fixtures/servers/rpc-error-server.mjs");

/** The tester's origins, then other local ports on every loopback name (never the gateway's). */
function attackOrigins(gatewayPort: number, count: number): string[] {
  const random = rng(23);
  const origins = ["http://localhost:9999", "http://127.0.0.1:5173", "http://[::1]:3000"];
  while (origins.length < count) {
    const port = 1 + Math.floor(random() * 65_535);
    if (port === gatewayPort) continue;
    const name = NAMES[origins.length % NAMES.length]!;
    origins.push(`http://${name}${port === 80 ? "" : `:${port}`}`);
  }
  return origins;
}

/** Opens /ws with `origin`, as a page's `new WebSocket()` does: the status of the refusal, or 101. */
async function wsStatus(url: string, origin: string): Promise<number> {
  const ws = new WebSocket(url, "mcp", { origin });
  const outcome = await Promise.race([
    once(ws, "open").then(() => 101),
    once(ws, "unexpected-response").then(([, res]) => (res as { statusCode: number }).statusCode),
  ]);
  ws.terminate();
  return outcome;
}

describe("pages on other local ports against a token-less gateway", {
  timeout: attackTimeout(90_000, 600_000),
}, () => {
  let dir: string;
  let gw: ServeProcess;
  let port: number;
  const action = (name: string, headers: Record<string, string>, body = "{}") =>
    rawHttp(`${gw.origin}/dashboard/servers/alpha/${name}`, { method: "POST", headers, body });
  const alpha = async () => {
    const state = await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" });
    const servers = (state.json as { servers: Array<{ name: string; enabled: boolean }> }).servers;
    return servers.find((s) => s.name === "alpha");
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-cross-origin-"));
    const config = join(dir, "mcplex.yaml");
    await writeFile(
      config,
      yamlConfig(
        { alpha: { command: process.execPath, args: [ECHO_SERVER] } },
        "serve:\n  readyWait: 1m\n  allowedOrigins: [https://app.example.com]\n",
      ),
    );
    gw = await serveHttp(["--config", config, "--allow-origin", "http://localhost:5174"]);
    port = Number(new URL(gw.origin).port);
  });
  afterAll(async () => {
    await gw?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("cannot disable a server, open a session or a WebSocket, nor reach /mcp", async () => {
    const origins = attackOrigins(port, attackSize(12, 600));
    const refused: Record<string, number[]> = {};
    const note = (what: string, status: number) => {
      refused[what] ??= [];
      if (!refused[what].includes(status)) refused[what].push(status);
    };
    for (const origin of origins) {
      // The tester's request, a form post, and the JSON one the page sends: the Origin refuses all.
      note("text/plain action", (await action("disable", { origin, "content-type": "text/plain" })).status);
      const form = { origin, "content-type": "application/x-www-form-urlencoded" };
      note("form action", (await action("disable", form, "x=1")).status);
      const json = { origin, "content-type": "application/json" };
      note("JSON action", (await action("disable", json)).status);
      const call = rev2026Request(1, "tools/call", { name: "alpha__echo", arguments: { message: "x" } });
      const mcp = await rawHttp(gw.url, { headers: { ...rev2026Headers(call), origin }, body: call });
      note("/mcp POST", mcp.status);
      const sse: RawResponse = await rawHttp(`${gw.origin}/sse`, {
        method: "GET",
        headers: { origin, accept: "text/event-stream" },
        timeoutMs: 5000,
      });
      note("/sse", sse.status);
      note("/ws", await wsStatus(gw.wsUrl, origin));
      // Ending a user's connections: a DELETE, which no page sends without a preflight; and the
      // Origin refuses it before anything else (this gateway keeps no vault: 501 from its own page).
      const disconnect = await rawHttp(`${gw.origin}/api/connections/alpha`, {
        method: "DELETE",
        headers: { origin },
      });
      note("DELETE /api/connections", disconnect.status);
      const revoke = await rawHttp(`${gw.origin}/api/users/someone/connections`, {
        method: "DELETE",
        headers: { origin },
      });
      note("DELETE /api/users", revoke.status);
    }
    expect(refused).toEqual({
      "text/plain action": [403],
      "form action": [403],
      "JSON action": [403],
      "/mcp POST": [403],
      "/sse": [403],
      "/ws": [403],
      "DELETE /api/connections": [403],
      "DELETE /api/users": [403],
    });
    expect(await alpha()).toMatchObject({ enabled: true });
    reportFigure("cross-origin dashboard actions", `${origins.length} local origins × 8 requests, all 403`);
  });

  it("takes no action its own page could be tricked into sending without a preflight", async () => {
    for (const origin of [gw.origin, `http://localhost:${port}`]) {
      const plain = await action("disable", { origin, "content-type": "text/plain" });
      expect(plain.status).toBe(415);
      expect(plain.json).toEqual({ error: expect.stringContaining('"Content-Type: application/json"') });
      const form = await action(
        "disable",
        { origin, "content-type": "application/x-www-form-urlencoded" },
        "x=1",
      );
      expect(form.status).toBe(415);
    }
    expect(await alpha()).toMatchObject({ enabled: true });
  });

  it("serves its own page, the origins the operator lists, and clients that send no Origin", async () => {
    const json = { "content-type": "application/json" };
    for (const origin of [gw.origin, "http://localhost:5174", "https://app.example.com"]) {
      expect((await action("disable", { ...json, origin })).status).toBe(200);
      expect(await alpha()).toMatchObject({ enabled: false });
      expect((await action("enable", { ...json, origin })).status).toBe(200);
      expect(await alpha()).toMatchObject({ enabled: true });
    }
    expect(await wsStatus(gw.wsUrl, gw.origin)).toBe(101);
    const own = await rawHttp(`${gw.origin}/api/users/someone/connections`, {
      method: "DELETE",
      headers: { origin: gw.origin },
    });
    // Past the Origin: 501 while serve() gives the dashboard no vault, 404 (no such user) once it does.
    expect([404, 501]).toContain(own.status);
    expect(await wsStatus(gw.wsUrl, "http://localhost:5174")).toBe(101);
    // A listed origin is exact too: another port or scheme of it is another site.
    expect((await action("disable", { ...json, origin: "http://localhost:5175" })).status).toBe(403);
    expect((await action("disable", { ...json, origin: "http://app.example.com" })).status).toBe(403);
    // curl, scripts and MCP clients that are not browsers send no Origin.
    expect((await action("restart", json)).status).toBe(200);
    const call = rev2026Request(2, "tools/call", { name: "alpha__echo", arguments: { message: "x" } });
    expect((await rawHttp(gw.url, { headers: rev2026Headers(call), body: call })).status).toBe(200);
  });
});
