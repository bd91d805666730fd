/**
 * A `ws://` server behind a proxy that refuses or cuts the WebSocket upgrade falls back to
 * Streamable HTTP at the same host and path. The peer is one real `node:http` server serving the
 * SDK fixture over Streamable HTTP at /mcp, whose `upgrade` answer each test chooses: an HTTP
 * refusal, a destroyed socket, or a real WebSocket (`ws`) serving the same fixture.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { ServerConfig } from "../../src/config/types.js";
import { McplexError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { Upstream } from "../../src/upstream/upstream.js";
import { EventLog } from "../fixtures/servers/event-log.js";
import { buildFixtureServer } from "../fixtures/servers/fixture-tools.js";
import { type HttpFixture, startHttpFixture } from "../fixtures/servers/http-fixture-server.js";
import { WebSocketServerTransport } from "../fixtures/servers/websocket-server-transport.js";
import { runCli } from "../support/cli.js";
import { configOf, remote } from "../support/config.js";
import { nextEvent } from "../support/wait.js";

type UpgradeAnswer = { refuse: number; text: string } | "reset" | "websocket";

/** The fixture over HTTP at /mcp; its upgrade answer is `answer.current` at the time of each upgrade. */
async function startPeer(first: UpgradeAnswer) {
  const answer = { current: first };
  const upgrades: string[] = [];
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
  });
  const log = new EventLog();
  const build = () =>
    buildFixtureServer({ record: log.record, state: { extraTools: 0 }, longDottedName: false });
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const now = answer.current;
    upgrades.push(typeof now === "string" ? now : String(now.refuse));
    if (now === "reset") socket.destroy();
    else if (now === "websocket") {
      wss.handleUpgrade(req, socket, head, (ws) => {
        serveStdio(build, { transport: new WebSocketServerTransport(ws) });
      });
    } else {
      socket.end(`HTTP/1.1 ${now.refuse} ${now.text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    }
  };
  const http: HttpFixture = await startHttpFixture({ upgrade });
  return {
    answer,
    upgrades,
    wsUrl: http.url.replace(/^http:/, "ws:"),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await http.close();
    },
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hubOf(server: ServerConfig): Promise<Hub> {
  const hub = new Hub({ config: configOf([server]) });
  cleanups.push(() => hub.close());
  await hub.start();
  return hub;
}

describe("a WebSocket server whose upgrade is refused", () => {
  it.each([
    [403, "Forbidden"],
    [502, "Bad Gateway"],
  ])("is served over Streamable HTTP after an HTTP %i answer, and says why", async (status, text) => {
    const peer = await startPeer({ refuse: status, text });
    cleanups.push(peer.close);
    const hub = await hubOf(remote("behind-proxy", peer.wsUrl, "websocket"));

    const [state] = hub.servers();
    expect(state).toMatchObject({
      state: "ready",
      transport: "streamable-http",
      fallbackReason: `websocket upgrade refused: ${status} ${text}`,
    });
    expect(peer.upgrades).toEqual([String(status)]);
    expect(hub.tools().map((t) => t.name)).toContain("behind-proxy__echo");
    const result = await hub.callTool("behind-proxy__echo", { message: "over http" });
    expect(result.content).toEqual([{ type: "text", text: "echo: over http" }]);
  });

  it("is served over Streamable HTTP when the upgrade's connection is reset", async () => {
    const peer = await startPeer("reset");
    cleanups.push(peer.close);
    const hub = await hubOf(remote("reset", peer.wsUrl, "websocket"));

    const [state] = hub.servers();
    expect(state?.state).toBe("ready");
    expect(state?.transport).toBe("streamable-http");
    expect(state?.fallbackReason).toMatch(/^websocket upgrade blocked: connection reset/);
    const result = await hub.callTool("reset__echo", { message: "after reset" });
    expect(result.content).toEqual([{ type: "text", text: "echo: after reset" }]);
  });

  it("fails to start with an error naming the option when fallback is none", async () => {
    const peer = await startPeer({ refuse: 502, text: "Bad Gateway" });
    cleanups.push(peer.close);
    const hub = await hubOf(remote("strict", peer.wsUrl, "websocket", { fallback: "none" }));

    const [state] = hub.servers();
    expect(state?.state).toBe("failed");
    expect(state?.transport).toBe("websocket");
    expect(state?.fallbackReason).toBeUndefined();
    expect(state?.error).toBe("strict: websocket upgrade refused: 502 Bad Gateway (fallback: none)");
    expect(state?.hint).toBe(
      `remove "fallback: none" from servers.strict to fall back to Streamable HTTP at ${peer.wsUrl.replace(/^ws:/, "http:")}`,
    );
    expect(hub.tools()).toEqual([]);
    const call = hub.callTool("strict__echo", { message: "x" });
    await expect(call).rejects.toBeInstanceOf(McplexError);
  });

  it("names both failures when the HTTP fallback fails too", async () => {
    const peer = await startPeer({ refuse: 403, text: "Forbidden" });
    cleanups.push(peer.close);
    // The same server, but a path it serves nothing at: the upgrade is refused, then POST is 404.
    const hub = await hubOf(remote("nowhere", peer.wsUrl.replace(/\/mcp$/, "/other"), "websocket"));

    const [state] = hub.servers();
    expect(state?.state).toBe("failed");
    expect(state?.error).toMatch(
      /^nowhere: websocket upgrade refused: 403 Forbidden, and the Streamable HTTP fallback at http:\/\/127\.0\.0\.1:\d+\/other failed too: .*404/,
    );
  });

  it("connects over WebSocket again once the proxy stops refusing", async () => {
    const peer = await startPeer({ refuse: 502, text: "Bad Gateway" });
    cleanups.push(peer.close);
    const upstream = new Upstream(remote("flaky", peer.wsUrl, "websocket"), {
      clientInfo: { name: "test", version: "1" },
      onEvent: () => {},
    });
    cleanups.push(() => upstream.close());

    await upstream.start();
    expect(upstream.transport).toBe("streamable-http");
    expect(upstream.fallbackReason).toBe("websocket upgrade refused: 502 Bad Gateway");

    peer.answer.current = "websocket";
    await upstream.close();
    await upstream.start();
    expect(upstream.transport).toBe("websocket");
    expect(upstream.fallbackReason).toBeUndefined();
    expect(peer.upgrades).toEqual(["502", "websocket"]);
    const result = await upstream.request<{ content: unknown }>("tools/call", {
      name: "echo",
      arguments: { message: "over ws" },
    });
    expect(result.content).toEqual([{ type: "text", text: "echo: over ws" }]);
  });
});

describe("a hub whose WebSocket server fell back to HTTP", () => {
  it("uses WebSocket on the connection after the proxy stops refusing (a restart after an idle stop)", async () => {
    const peer = await startPeer({ refuse: 403, text: "Forbidden" });
    cleanups.push(peer.close);
    const hub = await hubOf(remote("later", peer.wsUrl, "websocket", { idleTimeout: 200 }));
    expect(hub.servers()[0]).toMatchObject({
      transport: "streamable-http",
      fallbackReason: "websocket upgrade refused: 403 Forbidden",
    });

    await nextEvent(hub, (e) => e.type === "server-state" && e.state === "idle");
    peer.answer.current = "websocket";
    const result = await hub.callTool("later__echo", { message: "back on ws" });
    expect(result.content).toEqual([{ type: "text", text: "echo: back on ws" }]);
    const [state] = hub.servers();
    expect(state).toMatchObject({ state: "ready", transport: "websocket", starts: 2 });
    expect(state?.fallbackReason).toBeUndefined();
    expect(peer.upgrades).toEqual(["403", "websocket"]);
  });
});

describe("mcplex list --json", () => {
  it("shows the transport in use and why, for a WebSocket server served over HTTP", async () => {
    const peer = await startPeer({ refuse: 502, text: "Bad Gateway" });
    cleanups.push(peer.close);
    const dir = mkdtempSync(join(tmpdir(), "mcplex-ws-fallback-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, "mcplex.yaml");
    writeFileSync(config, `servers:\n  proxied:\n    url: ${peer.wsUrl}\n`);

    const { code, stdout, stderr } = await runCli(["list", "--config", config, "--json"]);
    expect(code, stderr).toBe(0);
    const [server] = (JSON.parse(stdout) as { servers: Array<Record<string, unknown>> }).servers;
    expect(server).toMatchObject({
      name: "proxied",
      state: "ready",
      transport: "streamable-http",
      fallbackReason: "websocket upgrade refused: 502 Bad Gateway",
    });
    expect(((server?.tools ?? []) as Array<{ name: string }>).map((t) => t.name)).toContain("proxied__echo");
  });
});
