import { describe, expect, it } from "vitest";
import { METHOD_HANDLERS } from "../../src/gateway/methods/method-handlers.js";
import { STANDARD_METHODS } from "../../src/protocol/method-table.js";

// The wire facts (which methods exist, per revision) are protocol/method-table.ts's rows; the
// gateway's answers are its handlers by the same names. The two may not drift apart.

/** Methods a client session answers before a request reaches the pipeline (client-session.ts). */
const SESSION_METHODS = ["initialize", "logging/setLevel", "subscriptions/listen"];

describe("the gateway's method handlers", () => {
  it("answer every method the method table says the gateway answers itself", () => {
    const own = STANDARD_METHODS.filter((row) => !row.forwarded && !SESSION_METHODS.includes(row.method));
    expect(own.map((row) => row.method)).toContain("tools/list");
    const missing = own.map((row) => row.method).filter((method) => !METHOD_HANDLERS.has(method));
    expect(missing, "rows with no handler in src/gateway/methods/").toEqual([]);
  });

  it("answer only methods the method table has", () => {
    const known = new Set(STANDARD_METHODS.map((row) => row.method));
    const unknown = [...METHOD_HANDLERS.keys()].filter((method) => !known.has(method));
    expect(unknown, "handlers of methods with no row in protocol/method-table.ts").toEqual([]);
  });

  it("leave the session's own methods to the session", () => {
    for (const method of SESSION_METHODS) {
      expect(STANDARD_METHODS.some((row) => row.method === method)).toBe(true);
      expect(METHOD_HANDLERS.has(method)).toBe(false);
    }
  });
});
