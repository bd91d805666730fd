import { describe, expect, it } from "vitest";
import { parseConfig, summarizeConfig } from "../../src/config/index.js";
import { errorOf } from "../support/config-errors.js";

const read = (text: string) => parseConfig(text, { source: "mcplex.yaml", env: {} });

describe("fallback", () => {
  it("is read on WebSocket servers as http or none, and left out when not given", () => {
    expect(read("servers:\n  a:\n    url: ws://h/mcp\n    fallback: none\n").servers[0]).toMatchObject({
      transport: "websocket",
      fallback: "none",
    });
    expect(read("servers:\n  a:\n    url: wss://h/mcp\n    fallback: http\n").servers[0]).toMatchObject({
      fallback: "http",
    });
    expect(read("servers:\n  a:\n    url: ws://h/mcp\n").servers[0]).not.toHaveProperty("fallback");
  });

  it("names a value that is not a fallback, with the ones there are", () => {
    const error = errorOf("servers:\n  a:\n    url: ws://h/mcp\n    fallback: sse\n");
    expect(error.path).toBe("servers.a.fallback");
    expect(error.message).toContain('"sse" is not a fallback; use "http" (the default) or "none"');
  });

  it("is refused on servers that are not WebSocket ones", () => {
    const http = errorOf("servers:\n  a:\n    url: http://h/mcp\n    fallback: none\n");
    expect(http.path).toBe("servers.a.fallback");
    expect(http.message).toContain(
      "only applies to WebSocket (ws://, wss://) servers; this one is streamable-http",
    );
    const stdio = errorOf("servers:\n  a:\n    command: x\n    fallback: none\n");
    expect(stdio.path).toBe("servers.a.fallback");
    expect(stdio.message).toContain("does not apply to stdio servers");
  });
});

describe("idleTimeout", () => {
  it("is read as a duration on any server, and absent by default", () => {
    expect(read("servers:\n  a:\n    command: x\n    idleTimeout: 10m\n").servers[0]).toMatchObject({
      idleTimeout: 600_000,
    });
    expect(read("servers:\n  a:\n    url: http://h/mcp\n    idleTimeout: 5000\n").servers[0]).toMatchObject({
      idleTimeout: 5000,
    });
    expect(read("servers:\n  a:\n    command: x\n").servers[0]).not.toHaveProperty("idleTimeout");
  });

  it("names a value that is not a duration, with its path", () => {
    const error = errorOf("servers:\n  a:\n    command: x\n    idleTimeout: later\n");
    expect(error.path).toBe("servers.a.idleTimeout");
    expect(error.message).toContain('"later" is not a duration');
  });
});

describe("available", () => {
  it("is read like servers, not started, with its secrets redacted like theirs", () => {
    const config = parseConfig(
      "servers:\n  a:\n    command: x\navailable:\n  github:\n    command: gh-mcp\n    env:\n      TOKEN: ${secret:gh}\n",
      {
        source: "mcplex.yaml",
        env: {},
        secretResolver: (name) => (name === "gh" ? "gh-token-value" : undefined),
      },
    );
    expect(config.servers.map((s) => s.name)).toEqual(["a"]);
    expect(config.available).toMatchObject([
      { name: "github", command: "gh-mcp", env: { TOKEN: "gh-token-value" } },
    ]);
    expect(config.secrets).toContain("gh-token-value");
    expect(read("servers: {}\n").available).toBeUndefined();
  });

  it("names a bad entry by its path under available", () => {
    const error = errorOf("available:\n  github:\n    comand: x\n");
    expect(error.issues.map((i) => i.path)).toContain("available.github.comand");
  });

  it("refuses a name that is also under servers", () => {
    const error = errorOf("servers:\n  a:\n    command: x\navailable:\n  a:\n    command: y\n");
    expect(error.path).toBe("available.a");
    expect(error.message).toContain('is also under "servers"');
  });

  it("serve.serverTools is read, and refused when there is nothing available to offer", () => {
    const config = read("available:\n  a:\n    command: x\nserve:\n  serverTools: true\n");
    expect(config.serve).toEqual({ serverTools: true });
    const error = errorOf("servers: {}\nserve:\n  serverTools: true\n");
    expect(error.path).toBe("serve.serverTools");
    expect(error.message).toContain('offers the servers under "available:", and there are none');
  });
});

describe("config check's summary", () => {
  it("takes a profile's available servers as known", () => {
    const config = read(
      "servers:\n  a:\n    command: x\navailable:\n  b:\n    command: y\nprofiles:\n  p:\n    servers: [a, b, ghost]\n",
    );
    const warnings = summarizeConfig(config).warnings.map((w) => w.message);
    expect(warnings).toEqual(['unknown server "ghost"']);
  });
});
