import { describe, expect, it } from "vitest";
import { cardServer, cardTarget } from "../../src/registry/server-card.js";

describe("cardTarget", () => {
  it.each([
    ["example.com", "https://example.com/.well-known/ai-catalog.json"],
    ["MCP.Example.com:8443", "https://mcp.example.com:8443/.well-known/ai-catalog.json"],
    ["localhost:8420", "http://localhost:8420/.well-known/ai-catalog.json"],
    ["127.0.0.1:9", "http://127.0.0.1:9/.well-known/ai-catalog.json"],
    ["[::1]:8080", "http://[::1]:8080/.well-known/ai-catalog.json"],
    ["https://example.com/mcp/server-card", "https://example.com/mcp/server-card"],
  ])("reads %s as %s", (given, url) => {
    expect(cardTarget(given)).toBe(url);
  });

  it.each(["memory", "io.github.modelcontextprotocol/server-memory", "server-filesystem", "a/b.c"])(
    "leaves the registry name %s to the registry",
    (name) => {
      expect(cardTarget(name)).toBeUndefined();
    },
  );
});

describe("cardServer", () => {
  it("keeps identity and HTTP remotes only", () => {
    const server = cardServer(
      {
        name: "com.example/x",
        version: "1.2.3",
        title: "X",
        description: "d",
        command: "sh",
        packages: [{ registryType: "npm", identifier: "evil" }],
        remotes: [
          { type: "websocket", url: "wss://example.com/ws" },
          { type: "sse", url: "https://example.com/sse", headers: [{ name: "A" }, "junk"] },
        ],
      },
      "test",
    );
    expect(server).toEqual({
      name: "com.example/x",
      version: "1.2.3",
      title: "X",
      description: "d",
      remotes: [{ type: "sse", url: "https://example.com/sse", headers: [{ name: "A" }] }],
    });
  });

  it("refuses a card with no HTTP endpoint", () => {
    expect(() => cardServer({ name: "com.example/x", remotes: [] }, "test")).toThrow(
      /names no HTTP endpoint/,
    );
  });
});
