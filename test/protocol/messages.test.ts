import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/protocol/error-codes.js";
import { readMessage } from "../../src/protocol/messages.js";
import { configOf, fixture } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  rawHttp,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

describe("readMessage", () => {
  it.each([
    ["a batch", [{ jsonrpc: "2.0", id: 1, method: "ping" }], null, ErrorCode.InvalidRequest, /batches/],
    ["not JSON-RPC 2.0", { id: 1, method: "ping" }, null, ErrorCode.InvalidRequest, /JSON-RPC 2\.0/],
    ["an empty id", { jsonrpc: "2.0", id: "", method: "ping" }, null, ErrorCode.InvalidRequest, /id must/],
    ["a null id", { jsonrpc: "2.0", id: null, method: "ping" }, null, ErrorCode.InvalidRequest, /id must/],
    ["an object id", { jsonrpc: "2.0", id: {}, method: "ping" }, null, ErrorCode.InvalidRequest, /id must/],
    ["no method", { jsonrpc: "2.0", id: 7 }, 7, ErrorCode.InvalidRequest, /needs a method/],
    [
      "array params",
      { jsonrpc: "2.0", id: 8, method: "ping", params: [] },
      8,
      ErrorCode.InvalidParams,
      /params/,
    ],
  ])("refuses %s, answering the id it could read", (_, value, id, code, message) => {
    const read = readMessage(value);
    expect(read).toMatchObject({ kind: "invalid", id, error: { code } });
    expect(typeof read === "object" && read.error.message).toMatch(message);
  });

  it("tells requests, notifications and responses apart", () => {
    expect(readMessage({ jsonrpc: "2.0", id: "a", method: "tools/list", params: {} })).toBe("request");
    expect(readMessage({ jsonrpc: "2.0", id: 0, method: "ping" })).toBe("request");
    expect(readMessage({ jsonrpc: "2.0", id: Number.NEGATIVE_INFINITY, method: "ping" })).toBe("request");
    expect(readMessage({ jsonrpc: "2.0", method: "notifications/initialized" })).toBe("notification");
    expect(readMessage({ jsonrpc: "2.0", id: "m-1", result: {} })).toBe("response");
    // A notification cannot be answered, even when its params are wrong.
    expect(readMessage({ jsonrpc: "2.0", method: "notifications/x", params: 3 })).toBe("ignored");
  });
});

// The fronts used to disagree on the id "": a 2025 session refused it, a 2026 POST took it.
describe("every front reads ids alike", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]));
  });
  afterAll(() => gw.stop());

  it('refuses the id "" on a 2026 POST', async () => {
    const res = await postRev2026(gw.url, rev2026Request("", "tools/list"));
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest } });
  });

  it('refuses the id "" in a 2025 session', async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await rawHttp(gw.url, {
      headers,
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
    });
    const session = String(init.headers["mcp-session-id"]);
    const res = await rawHttp(gw.url, {
      headers: { ...headers, "mcp-session-id": session },
      body: { jsonrpc: "2.0", id: "", method: "tools/list" },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(res.json ?? res.body)).toContain(String(ErrorCode.InvalidRequest));
  });
});
