import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, fixture } from "../support/config.js";
import {
  eventually,
  type InProcessGateway,
  postRev2026,
  rawHttp,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// Connection caps and the idle timeout of the HTTP front, in process; the attack at full size
// is test/fronts/idle-connections.hostile.test.ts.

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([fixture("fx")]));
});
afterAll(() => gw?.stop());

/** A raw connection to `front` that sends nothing, once the server has it. */
async function idle(front: HttpFront, localAddress = "127.0.0.1"): Promise<Socket> {
  const { port } = new URL(front.url);
  const taken = once(front.server, "connection");
  const socket = connect({ port: Number(port), host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  await once(socket, "connect");
  await taken;
  return socket;
}

/** Everything a socket receives until the server closes it. */
async function untilClosed(socket: Socket): Promise<string> {
  let text = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  if (!socket.destroyed) await once(socket, "close");
  return text;
}

const echo = (id: number) =>
  rev2026Request(id, "tools/call", { name: "fx__echo", arguments: { message: "hi" } });

describe("the HTTP front's connections", () => {
  it("are closed with 408 when no request head comes within the idle timeout", async () => {
    const front = await gw.addFront({ idleTimeoutMs: 300 });
    const answer = await untilClosed(await idle(front));
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("past the per-address cap are served /healthz and /readyz only, and a closed one gives its place back", async () => {
    const front = await gw.addFront({ maxConnectionsPerClient: 2 });
    const origin = front.url.replace(/\/mcp$/, "");
    const held = [await idle(front), await idle(front)];
    expect((await rawHttp(`${origin}/healthz`, { method: "GET" })).status).toBe(200);
    expect((await rawHttp(`${origin}/readyz`, { method: "GET" })).status).toBe(200);
    const refused = await postRev2026(front.url, echo(1));
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.body).toMatch(/too many open connections \(at most \d+ in all and 2 per client address\)/);
    const ws = new WebSocket(front.wsUrl, "mcp");
    const [, response] = await once(ws, "unexpected-response");
    expect(response.statusCode).toBe(503);
    // Another address has places of its own.
    const other = await idle(front, "127.0.0.2");
    other.destroy();
    for (const socket of held) socket.destroy();
    const served = await eventually(async () => {
      const res = await postRev2026(front.url, echo(2));
      return res.status === 200 ? res : undefined;
    });
    expect(served.status).toBe(200);
  });

  it("past the total cap still answer a probe while every place is held", async () => {
    const front = await gw.addFront({ maxConnections: 3 });
    const origin = front.url.replace(/\/mcp$/, "");
    const held = await Promise.all([2, 3, 4].map((n) => idle(front, `127.0.0.${n}`)));
    try {
      expect((await rawHttp(`${origin}/healthz`, { method: "GET" })).status).toBe(200);
      expect((await postRev2026(front.url, echo(3))).status).toBe(503);
    } finally {
      for (const socket of held) socket.destroy();
    }
    const metrics = await eventually(async () => {
      const res = await rawHttp(`${origin}/metrics`, { method: "GET" });
      return res.status === 200 ? res.body : undefined;
    });
    expect(metrics).toMatch(/^mcplex_limit_refusals_total\{limit="connections"\} [2-9]/m);
    expect(metrics).toMatch(/^mcplex_http_connections \d+/m);
  });
});
