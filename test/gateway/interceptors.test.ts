import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import type { CallRequest, Interceptor } from "../../src/hub/call-pipeline.js";
import { ErrorCode } from "../../src/protocol/error-codes.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { configOf, fixture } from "../support/config.js";
import { type InProcessGateway, resultText, startGateway } from "../support/gateway.js";

// Interceptors are public API: a library user adds layers on the path of every request
// (policy, audit, rewriting) and they see the same request object from every front and
// revision, with what it names already resolved in the catalog.

let gw: InProcessGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

type Front = "http-2025" | "http-2026" | "ws-2025";

async function connect(front: Front): Promise<Client> {
  const client = new Client(
    { name: "interceptor-test", version: "1.0.0" },
    { versionNegotiation: { mode: front === "http-2026" ? "auto" : "legacy" } },
  );
  const url = gw!.url;
  await client.connect(
    front === "ws-2025"
      ? new WebSocketClientTransport({ url: gw!.wsUrl })
      : new StreamableHTTPClientTransport(new URL(url)),
  );
  return client;
}

/** Records what each interceptor call saw. */
function audit(seen: CallRequest[]): Interceptor {
  return (next) => async (request) => {
    seen.push(request);
    return next(request);
  };
}

/** Refuses one tool with a wire error, before anything reaches its server. */
const policy: Interceptor = (next) => async (request) => {
  if (request.target?.kind === "tool" && request.target.tool?.originalName === "crash")
    throw new RpcError(ErrorCode.InvalidRequest, "policy: crash is not allowed here");
  return next(request);
};

/** Changes the arguments a tool is called with. */
const shout: Interceptor = (next) => async (request) => {
  if (request.method !== "tools/call") return next(request);
  const args = request.params.arguments as { message?: string };
  const params = { ...request.params, arguments: { ...args, message: String(args.message).toUpperCase() } };
  return next({ ...request, params });
};

describe.each<Front>(["http-2025", "http-2026", "ws-2025"])("interceptors over %s", (front) => {
  it("see the resolved target, refuse, and rewrite, in the order given", async () => {
    const seen: CallRequest[] = [];
    gw = await startGateway(configOf([fixture("fx")]), {}, { interceptors: [audit(seen), policy, shout] });
    const client = await connect(front);
    try {
      expect(resultText(await client.callTool({ name: "fx__echo", arguments: { message: "hi" } }))).toBe(
        "echo: HI",
      );
      await expect(client.callTool({ name: "fx__crash", arguments: {} })).rejects.toThrow(
        /policy: crash is not allowed here/,
      );
      const calls = seen.filter((r) => r.method === "tools/call");
      expect(calls.map((r) => r.target)).toMatchObject([
        { kind: "tool", name: "fx__echo", server: "fx", tool: { originalName: "echo", server: "fx" } },
        { kind: "tool", name: "fx__crash", server: "fx", tool: { originalName: "crash" } },
      ]);
      // The audit is outermost: it saw the arguments before the rewrite.
      expect(calls[0]?.params.arguments).toEqual({ message: "hi" });
      expect(calls[0]?.context.stateless).toBe(front === "http-2026");
      expect(calls[0]?.context.protocolVersion).toBe(front === "http-2026" ? "2026-07-28" : "2025-11-25");
    } finally {
      await client.close();
    }
  });
});

describe("the pipeline", () => {
  it("takes interceptors added later with use(), inside the earlier ones, and removes them", async () => {
    const order: string[] = [];
    const mark =
      (name: string): Interceptor =>
      (next) =>
      async (request) => {
        if (request.method === "tools/call") order.push(name);
        return next(request);
      };
    gw = await startGateway(configOf([fixture("fx")]), {}, { interceptors: [mark("first")] });
    const remove = gw.gateway.use(mark("second"));
    const client = await connect("http-2026");
    try {
      await client.callTool({ name: "fx__echo", arguments: { message: "a" } });
      remove();
      await client.callTool({ name: "fx__echo", arguments: { message: "b" } });
      expect(order).toEqual(["first", "second", "first"]);
    } finally {
      await client.close();
    }
  });

  it("looks up a call's tool in the catalog once, whatever watches it", async () => {
    gw = await startGateway(configOf([fixture("fx")]));
    const stop = gw.gateway.watchCalls({ started() {}, ended() {} });
    const catalog = gw.hub.catalog;
    const resolveTool = catalog.resolveTool.bind(catalog);
    let lookups = 0;
    catalog.resolveTool = (name, profile) => {
      lookups++;
      return resolveTool(name, profile);
    };
    const client = await connect("http-2026");
    try {
      await client.callTool({ name: "fx__echo", arguments: { message: "once" } });
      // The HTTP front's metrics observe every request, and the watcher every call.
      expect(lookups).toBe(1);
    } finally {
      catalog.resolveTool = resolveTool;
      stop();
      await client.close();
    }
  });
});
