import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, EVERYTHING, stdio } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";
import { sseSession } from "../support/sse-stream.js";

// A 2024-11-05 gateway client (an older SDK on HTTP+SSE) gets only content blocks its revision
// defines; newer clients get what the upstream sent.

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([stdio("ev", EVERYTHING, ["stdio"])]));
});
afterAll(async () => {
  await gw?.stop();
});

async function callLinks(protocolVersion: string): Promise<Array<Record<string, unknown>>> {
  const { stream, post } = await sseSession(gw.origin, protocolVersion);
  try {
    await post({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "ev__get-resource-links", arguments: { count: 2 } },
    });
    for (;;) {
      const message = await stream.next();
      if (message.id === 7) return (message.result as { content: Array<Record<string, unknown>> }).content;
    }
  } finally {
    stream.close();
  }
}

describe("a 2024-11-05 gateway client", () => {
  it("gets resource links as text blocks naming the resource, which its revision can show", async () => {
    const content = await callLinks("2024-11-05");
    expect(content.map((c) => c.type)).toEqual(["text", "text", "text"]);
    expect(String(content[1]?.text)).toMatch(/^Resource link: .*demo:\/\/resource\/\S+/);
  });

  it("while a 2025-06-18 client gets the resource_link blocks themselves", async () => {
    const content = await callLinks("2025-06-18");
    expect(content.map((c) => c.type)).toEqual(["text", "resource_link", "resource_link"]);
  });
});
