import { once } from "node:events";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveGatewayStdio } from "../../src/fronts/stdio-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, fixture } from "../support/config.js";

// A stdio client that stops reading its answers: the front must stop reading its requests
// rather than pile the answers up in memory, and go on once the client reads again.

let hub: Hub;
let gateway: Gateway;
beforeAll(async () => {
  hub = new Hub({ config: configOf([fixture("fx")]) });
  const starting = hub.start();
  gateway = new Gateway(hub, { ready: starting });
  await starting;
});
afterAll(async () => {
  gateway.close();
  await hub.close();
});

describe("the stdio front", () => {
  it("stops reading requests while the client does not read its answers, and resumes when it does", async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 1024 });
    const { session } = serveGatewayStdio(gateway, { input, output, maxInFlightBytes: 2 * 1024 * 1024 });
    const send = (m: unknown) => input.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const message = "m".repeat(1024 * 1024);
    const calls = 8;
    const paused = once(input, "pause");
    for (let id = 2; id < 2 + calls; id++)
      send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "fx__echo", arguments: { message } },
      });
    await paused;
    expect(input.isPaused()).toBe(true);

    // The client reads again: every answer arrives, so the requests left unread were read.
    const answered = new Set<number>();
    let buffer = "";
    const all = new Promise<void>((resolve) => {
      output.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
          const answer = JSON.parse(buffer.slice(0, nl)) as {
            id: number;
            result?: { content: { text: string }[] };
          };
          buffer = buffer.slice(nl + 1);
          if (answer.id >= 2 && answer.result?.content[0]?.text === `echo: ${message}`)
            answered.add(answer.id);
          if (answered.size === calls) resolve();
        }
      });
    });
    await all;
    expect(input.isPaused()).toBe(false);
    session.close();
  }, 60_000);
});
