import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Gateway } from "../../src/gateway/gateway.js";
import {
  type Handler,
  type Interceptor,
  interceptor,
  type JsonObject,
  type RequestContext,
} from "../../src/hub/call-pipeline.js";
import { Hub } from "../../src/hub/hub.js";
import { RawJson } from "../../src/protocol/raw-json.js";
import { configOf, stdio } from "../support/config.js";

// Each interceptor declares what it reads of results (`needs`): the path stays raw (a result kept
// as the server's text) while every one on it declares "raw"; one that declares nothing gets
// parsed results, wherever it is added.

/** What the server answers, as JSON.stringify would never write it. */
const VERBATIM_RESULT = '{"content": [ {"text": "ok", "type": "text"} ], "isError": false}';

let hub: Hub;
let gateway: Gateway;
beforeAll(async () => {
  const server = stdio("vb", process.execPath, [
    "test/fixtures/servers/verbatim-server.mjs",
    VERBATIM_RESULT,
  ]);
  hub = new Hub({ config: configOf([server]) });
  const starting = hub.start();
  gateway = new Gateway(hub, { ready: starting });
  await starting;
});
afterAll(async () => {
  gateway.close();
  await hub.close();
});

/** A 2025 session's `tools/call` of the verbatim tool, through the gateway's pipeline. */
function call(): Promise<JsonObject> {
  const context: RequestContext = {
    stateless: false,
    protocolVersion: "2025-11-25",
    clientCapabilities: {},
    signal: new AbortController().signal,
    notify: () => {},
  };
  return gateway.handle(gateway.request(1, "tools/call", { name: "vb__verbatim", arguments: {} }, context));
}

/** An interceptor that keeps the results it sees in `seen`, declared as `needs` says. */
function keeping(seen: JsonObject[], needs?: "raw" | "parsed"): Interceptor {
  const layer =
    (next: Handler): Handler =>
    async (request) => {
      const result = await next(request);
      if (request.method === "tools/call") seen.push(result);
      return result;
    };
  return needs === undefined ? layer : interceptor({ needs }, layer);
}

describe("an interceptor's declared needs", () => {
  it("keep the result as the server's text with no interceptor, or only raw ones, on the path", async () => {
    expect(await call()).toBeInstanceOf(RawJson);
    const seen: JsonObject[] = [];
    const offHub = hub.use(keeping(seen, "raw"));
    const offGateway = gateway.use(keeping(seen, "raw"));
    const offUpstream = hub.use(keeping(seen, "raw"), { at: "upstream" });
    try {
      expect(await call()).toBeInstanceOf(RawJson);
      expect(seen).toHaveLength(3);
      for (const result of seen) expect(result).toBeInstanceOf(RawJson);
    } finally {
      offHub();
      offGateway();
      offUpstream();
    }
  });

  it.each([
    ["the hub's", (layer: Interceptor) => hub.use(layer)],
    ["the gateway's", (layer: Interceptor) => gateway.use(layer)],
    ["an upstream", (layer: Interceptor) => hub.use(layer, { at: "upstream" })],
  ])("give %s interceptor that declares nothing parsed results", async (_, add) => {
    const seen: JsonObject[] = [];
    const remove = add(keeping(seen));
    try {
      const result = await call();
      expect(seen).toHaveLength(1);
      expect(seen[0]).not.toBeInstanceOf(RawJson);
      expect(seen[0]!.content).toEqual([{ text: "ok", type: "text" }]);
      expect(result).not.toBeInstanceOf(RawJson);
    } finally {
      remove();
    }
    // Removed, it no longer holds the path parsed.
    expect(await call()).toBeInstanceOf(RawJson);
  });

  it("give an interceptor that declares parsed results parsed results", async () => {
    const seen: JsonObject[] = [];
    const remove = gateway.use(keeping(seen, "parsed"));
    try {
      await call();
      expect(seen[0]).not.toBeInstanceOf(RawJson);
    } finally {
      remove();
    }
  });
});
