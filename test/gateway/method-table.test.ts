import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { CallRequest, Interceptor } from "../../src/hub/call-pipeline.js";
import { MethodTable, STANDARD_METHODS } from "../../src/protocol/method-table.js";
import { configOf, stdio } from "../support/config.js";
import { type InProcessGateway, postRev2026, rev2026Request, startGateway } from "../support/gateway.js";

// A method the gateway does not know is one row of its method table: the row says what the
// params name, and a forwarded row goes to the server that owns it, with no other code.

const VENDOR = "test/fixtures/servers/rpc-error-server.mjs";

let gw: InProcessGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function start(seen: CallRequest[] = []): Promise<InProcessGateway> {
  const audit: Interceptor = (next) => async (request) => {
    seen.push(request);
    return next(request);
  };
  return await startGateway(
    configOf([stdio("acme", "node", [VENDOR]), stdio("other", "node", [VENDOR, "--tool", "shout"])]),
    {},
    {
      methods: [{ method: "acme/echo", target: "tool", forwarded: true }],
      interceptors: [audit],
    },
  );
}

describe("the method table", () => {
  it("forwards a made-up method added as one row to the server of the tool it names (2026)", async () => {
    const seen: CallRequest[] = [];
    gw = await start(seen);
    const res = await postRev2026(gw.url, rev2026Request(1, "acme/echo", { name: "other__shout", extra: 7 }));
    expect(res.status).toBe(200);
    const result = (res.json as { result: { received: Record<string, unknown>; server: string } }).result;
    // The exposed name went out as the server's own; the other params as they came.
    expect(result.received.name).toBe("shout");
    expect(result.received.extra).toBe(7);
    const request = seen.find((r) => r.method === "acme/echo");
    expect(request?.target).toMatchObject({ kind: "tool", server: "other" });
    expect(request?.row).toMatchObject({ forwarded: true, target: "tool" });
  });

  it("forwards it from a 2025 session too", async () => {
    gw = await start();
    const client = new Client(
      { name: "method-table-test", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    try {
      const echoed = z.object({ received: z.looseObject({ name: z.string() }) });
      const result = await client.request({ method: "acme/echo", params: { name: "acme__echo" } }, echoed);
      expect(result.received.name).toBe("echo");
    } finally {
      await client.close();
    }
  });

  it("answers a clear error when the row's target names nothing the caller can reach", async () => {
    gw = await start();
    const res = await postRev2026(gw.url, rev2026Request(2, "acme/echo", { name: "nobody__here" }));
    const error = (res.json as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("acme/echo names no known target (nobody__here)");
  });

  it("still answers method-not-found for a method with no row", async () => {
    gw = await start();
    const res = await postRev2026(gw.url, rev2026Request(3, "acme/other", { name: "acme__echo" }));
    expect((res.json as { error: { code: number } }).error.code).toBe(-32601);
  });

  it("refuses a row that would replace a standard method", () => {
    expect(() => new MethodTable([{ method: "tools/call", target: "none" }])).toThrow(/standard MCP method/);
    expect(new MethodTable().get("tools/call")).toBe(STANDARD_METHODS.find((r) => r.method === "tools/call"));
  });
});
