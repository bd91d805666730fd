import { describe, expect, it } from "vitest";
import { stringifyMessage } from "../../src/protocol/messages.js";

describe("stringifyMessage", () => {
  it.each([
    ["an answer", { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: 'hi "\n\u2028' }] } }],
    [
      "a request with a string id",
      { jsonrpc: "2.0", id: 'a"b', method: "tools/call", params: { name: "x" } },
    ],
    ["a notification", { jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } }],
    ["an error with a null id", { jsonrpc: "2.0", id: null, error: { code: -32600, message: "bad" } }],
    ["a fractional id", { jsonrpc: "2.0", id: 1.5, result: {} }],
    ["members in another order", { result: { a: [1, null] }, id: 7, jsonrpc: "2.0" }],
    [
      "a member set to undefined",
      { jsonrpc: "2.0", id: 1, result: undefined, error: { code: 1, message: "x" } },
    ],
    ["a member of its own", { jsonrpc: "2.0", id: 1, result: {}, extra: 3 }],
    ["params that JSON leaves out", { jsonrpc: "2.0", id: 1, method: "m", params: () => 1 }],
    ["another jsonrpc", { jsonrpc: "1.0", id: 1, method: "m" }],
    ["a toJSON", { jsonrpc: "2.0", id: 1, result: {}, toJSON: () => ({ replaced: true }) }],
  ])("writes %s as JSON.stringify does", (_, message) => {
    const text = stringifyMessage(message);
    // The same JSON value; members may come in another order.
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(message)));
  });

  it("writes the envelope in JSON-RPC order with no spaces", () => {
    expect(stringifyMessage({ id: 3, result: { ok: true }, jsonrpc: "2.0" })).toBe(
      '{"jsonrpc":"2.0","id":3,"result":{"ok":true}}',
    );
  });

  it("throws on a cycle, as JSON.stringify does", () => {
    const params: Record<string, unknown> = {};
    params.self = params;
    expect(() => stringifyMessage({ jsonrpc: "2.0", method: "m", params })).toThrow(TypeError);
  });
});
