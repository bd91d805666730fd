// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { describe, expect, it } from "vitest";
import { parseConfig, parseDuration } from "../../src/config/index.js";
import { errorOf } from "../support/config-errors.js";

describe("config validation", () => {
  it("names a typo'd key with its path, a suggestion and the valid keys", () => {
    const error = errorOf("servers:\n  github:\n    comand: npx\n");
    const typo = error.issues.find((i) => i.path === "servers.github.comand");
    expect(typo?.message).toContain('unknown key "comand"; did you mean "command"?');
    expect(typo?.message).toMatch(/valid keys: .*command.*args/);
  });

  it("catches unknown top-level keys but allows $schema and x- anchors", () => {
    const error = errorOf("server:\n  a:\n    command: x\n");
    expect(error.path).toBe("server");
    expect(error.message).toContain('did you mean "servers"?');
    expect(() =>
      parseConfig('{"$schema": "s", "x-base": {"a": 1}, "servers": {}}', { source: "m.json" }),
    ).not.toThrow();
  });

  it("reads share: false with its maxSessions, and refuses a cap without it or below one", () => {
    const config = parseConfig("servers:\n  a:\n    command: x\n    share: false\n    maxSessions: 4\n", {
      source: "mcplex.yaml",
    });
    expect(config.servers[0]).toMatchObject({ share: false, maxSessions: 4 });
    const orphan = errorOf("servers:\n  a:\n    command: x\n    maxSessions: 4\n");
    expect(orphan.path).toBe("servers.a.maxSessions");
    expect(orphan.message).toContain('add "share: false"');
    const zero = errorOf("servers:\n  a:\n    command: x\n    share: false\n    maxSessions: 0\n");
    expect(zero.message).toContain("servers.a.maxSessions: must be a whole number of at least 1, not 0");
  });

  it("reads serve.readyWait as a duration or 0, and names a bad one", () => {
    const read = (text: string) => parseConfig(text, { source: "mcplex.yaml" }).serve;
    expect(read("serve:\n  readyWait: 2s\nservers: {}\n")).toEqual({ readyWait: 2000 });
    expect(read("serve:\n  readyWait: 0\nservers: {}\n")).toEqual({ readyWait: 0 });
    const bad = errorOf("serve:\n  readyWait: soon\nservers: {}\n");
    expect(bad.path).toBe("serve.readyWait");
    expect(bad.message).toContain('"soon" is not a duration');
    expect(errorOf("serve:\n  readyWiat: 1s\nservers: {}\n").message).toContain('did you mean "readyWait"?');
  });

  it("reads serve.allowedOrigins as browsers write origins, and names an entry that is not one", () => {
    const read = (text: string) => parseConfig(text, { source: "mcplex.yaml" }).serve;
    expect(
      read(
        "serve:\n  allowedOrigins: [HTTPS://App.Example.com:443, 'http://localhost:5173/']\nservers: {}\n",
      ),
    ).toEqual({ allowedOrigins: ["https://app.example.com", "http://localhost:5173"] });
    const path = errorOf("serve:\n  allowedOrigins: [https://a.test, https://b.test/app]\nservers: {}\n");
    expect(path.path).toBe("serve.allowedOrigins[1]");
    expect(path.message).toContain("has a path, query or fragment (/app)");
    const bare = errorOf("serve:\n  allowedOrigins: [app.example.com]\nservers: {}\n");
    expect(bare.message).toContain("is not an origin; write scheme://host[:port]");
  });

  it("reads the connection and memory limits of serve:, and names a bad one", () => {
    const read = (text: string) => parseConfig(text, { source: "mcplex.yaml" }).serve;
    expect(
      read(
        "serve:\n  idleTimeout: 10s\n  maxConnections: 5000\n  maxConnectionsPerClient: 200\n  memoryBudget: 48MiB\nservers: {}\n",
      ),
    ).toEqual({
      idleTimeout: 10_000,
      maxConnections: 5000,
      maxConnectionsPerClient: 200,
      memoryBudget: 48 * 2 ** 20,
    });
    expect(read("serve:\n  memoryBudget: 1048576\nservers: {}\n")).toEqual({ memoryBudget: 2 ** 20 });
    const bad = errorOf("serve:\n  memoryBudget: lots\nservers: {}\n");
    expect(bad.path).toBe("serve.memoryBudget");
    expect(bad.message).toContain('"lots" is not a size; use bytes (67108864) or a string like "64MiB"');
    expect(errorOf("serve:\n  maxConnections: 0\nservers: {}\n").path).toBe("serve.maxConnections");
  });

  it("reads the telemetry block, names a bad field, and redacts its headers", () => {
    const config = parseConfig(
      "telemetry:\n  enabled: true\n  endpoint: http://localhost:4318\n  sampleRatio: 0.25\n  headers:\n    x-api-key: abcdefgh12345678\nservers: {}\n",
      { source: "mcplex.yaml" },
    );
    expect(config.telemetry).toEqual({
      enabled: true,
      endpoint: "http://localhost:4318",
      sampleRatio: 0.25,
      headers: { "x-api-key": "abcdefgh12345678" },
    });
    expect(config.secrets).toContain("abcdefgh12345678");
    expect(errorOf("telemetry:\n  endpoint: localhost:4318\nservers: {}\n").path).toBe("telemetry.endpoint");
    expect(errorOf("telemetry:\n  sampleRatio: 2\nservers: {}\n").message).toContain("from 0 to 1");
    expect(errorOf("telemetry:\n  enable: true\nservers: {}\n").message).toContain('did you mean "enabled"?');
  });

  it("says a server needs either command or url", () => {
    const error = errorOf("servers:\n  github:\n    timeout: 10s\n");
    expect(error.path).toBe("servers.github");
    expect(error.message).toContain(
      'servers.github: needs either "command" (stdio) or "url" (http, sse, websocket)',
    );
  });

  it("rejects a server with both command and url", () => {
    expect(errorOf("servers:\n  a:\n    command: x\n    url: http://h/mcp\n").message).toContain(
      'both "command" and "url"',
    );
  });

  it("reports wrong types with the exact path", () => {
    const error = errorOf(
      "servers:\n  a:\n    command: x\n    args: --verbose\n    env: [A]\n    enabled: yes-please\n    lazy: 1\n",
    );
    const byPath = Object.fromEntries(error.issues.map((i) => [i.path, i.message]));
    expect(byPath["servers.a.args"]).toMatch(/must be a list of strings/);
    expect(byPath["servers.a.env"]).toMatch(/must be a map/);
    expect(byPath["servers.a.enabled"]).toMatch(/must be true or false/);
    expect(byPath["servers.a.lazy"]).toMatch(/must be true or false/);
  });

  it("collects every problem in one error, listing them in the message", () => {
    const error = errorOf(
      "servers:\n  a:\n    comand: x\n  b:\n    url: ftp://h\n  c:\n    command: x\n    timeout: soon\n",
    );
    expect(error.issues.map((i) => i.path)).toEqual([
      "servers.a.comand",
      "servers.a",
      "servers.b.url",
      "servers.c.timeout",
    ]);
    expect(error.message).toMatch(/^mcplex\.yaml has 4 problems:/);
    expect(error.message).toContain("servers.c.timeout:");
  });

  it("rejects bad timeouts with the accepted forms as a fix", () => {
    for (const bad of ["soon", "-5", "0", "10 years", "30x"]) {
      const error = errorOf(`servers:\n  github:\n    command: x\n    timeout: "${bad}"\n`);
      expect(error.path).toBe("servers.github.timeout");
      expect(error.message).toMatch(
        /is not a duration; use milliseconds \(30000\) or a string like "30s", "2m", "500ms"/,
      );
    }
  });

  it("rejects transports that do not fit the url", () => {
    expect(errorOf("servers:\n  a:\n    url: http://h/mcp\n    transport: websocket\n").path).toBe(
      "servers.a.url",
    );
    expect(errorOf("servers:\n  a:\n    url: ws://h/mcp\n    transport: sse\n").message).toContain(
      "http:// or https://",
    );
    expect(errorOf("servers:\n  a:\n    url: http://h/mcp\n    transport: grpc\n").message).toMatch(
      /"grpc" is not valid; use one of: stdio, streamable-http, http, sse, websocket/,
    );
    expect(errorOf("servers:\n  a:\n    url: not a url\n").message).toContain("is not a URL");
  });

  it("rejects keys that belong to another kind of server", () => {
    const error = errorOf("servers:\n  a:\n    command: x\n    headers: {A: b}\n    root: /tmp\n");
    expect(error.issues.map((i) => i.path)).toEqual(["servers.a.root", "servers.a.headers"]);
  });

  it("rejects bad server names with a suggested fix", () => {
    const error = errorOf('{"servers": {"my server": {"command": "x"}}}', { source: "m.json" });
    expect(error.path).toBe('servers["my server"]');
    expect(error.message).toContain('e.g. "my-server"');
  });

  it("checks workspace rules", () => {
    const error = errorOf(
      "servers:\n  w:\n    type: workspace\n    rules:\n      - pattern: src/**\n        ops: [read, delete]\n      - ops: [read]\n",
    );
    expect(error.issues.map((i) => i.path)).toEqual(["servers.w.rules[0].ops[1]", "servers.w.rules[1]"]);
  });

  it("reports YAML syntax errors with file, line and column", () => {
    const error = errorOf("servers:\n  a:\n    command: x\n    args: [a, b\n  b: {}\n");
    expect(error.message).toMatch(/^mcplex\.yaml:\d+:\d+: YAML syntax error/);
    expect(error.issues[0]?.line).toBeGreaterThan(3);
    const dup = errorOf("servers:\n  a:\n    command: x\n  a:\n    command: y\n");
    expect(dup.message).toMatch(/^mcplex\.yaml:4:3: YAML syntax error: Map keys must be unique/);
  });

  it("reports JSON syntax errors with file, line and column", () => {
    const error = errorOf('{\n  "servers": {\n    "a": { "command" "x" }\n  }\n}', {
      source: "/etc/mcplex.json",
    });
    expect(error.message).toMatch(/^\/etc\/mcplex\.json:3:\d+: JSON syntax error/);
    expect(error.issues[0]).toMatchObject({ line: 3 });
  });

  it("never shows a secret in an error, even when the secret is the bad value", () => {
    const error = errorOf(
      "servers:\n  a:\n    command: x\n    timeout: ${secret:oops}\n    prefix: ${secret:oops}\n",
      {
        secretResolver: (name) => (name === "oops" ? "hunter2 super secret" : undefined),
      },
    );
    expect(error.issues.map((i) => i.path)).toEqual(["servers.a.timeout", "servers.a.prefix"]);
    expect(error.message).not.toContain("hunter2");
    expect(JSON.stringify(error.issues)).not.toContain("hunter2");
    expect(error.message).toContain("***");
  });

  it("rejects a file that is not a map", () => {
    expect(errorOf("- a\n- b\n").message).toContain("must hold a map");
  });

  it("accepts an empty file as a config with no servers", () => {
    expect(parseConfig("", { source: "mcplex.yaml" }).servers).toEqual([]);
  });
});

describe("durations", () => {
  it("parses numbers as milliseconds and unit strings", () => {
    expect(parseDuration(1500)).toBe(1500);
    expect(parseDuration("1500")).toBe(1500);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("2m")).toBe(120_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration(" 2 m ")).toBe(120_000);
  });

  it("refuses what a timer could not honour", () => {
    for (const bad of [
      0,
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "",
      "s",
      "10d",
      "1m30",
      "30sec",
      true,
      null,
      "720h",
    ]) {
      expect(parseDuration(bad)).toBeUndefined();
    }
  });
});

describe("protocol version pin", () => {
  it("reads protocolVersion and rejects what is not a revision date", () => {
    const config = parseConfig("servers:\n  a:\n    command: x\n    protocolVersion: 2025-11-25\n", {
      source: "m.yaml",
    });
    expect(config.servers[0]).toMatchObject({ protocolVersion: "2025-11-25" });
    expect(errorOf("servers:\n  a:\n    command: x\n    protocolVersion: latest\n").path).toBe(
      "servers.a.protocolVersion",
    );
  });
});

describe("YAML conveniences", () => {
  it("merges x- anchors with << and treats an empty servers: as no servers", () => {
    const config = parseConfig(
      "x-defaults: &defaults\n  timeout: 10s\n  lazy: true\nservers:\n  a:\n    <<: *defaults\n    command: x\n",
      { source: "m.yaml" },
    );
    expect(config.servers[0]).toMatchObject({ timeout: 10_000, lazy: true });
    expect(parseConfig("servers:\nprofiles:\n", { source: "m.yaml" }).servers).toEqual([]);
  });

  it("reads oauth as true or as a map, and says what is wrong with one", () => {
    const ok = parseConfig(
      [
        "servers:",
        "  a:",
        "    url: https://a.example/mcp",
        "    oauth: true",
        "  b:",
        "    url: https://b.example/mcp",
        "    oauth:",
        "      clientId: mcplex-b",
        "      clientSecret: s3cret-value",
        "      scope: read write",
        "      redirectUrl: http://127.0.0.1:9999/cb",
      ].join("\n"),
      { source: "mcplex.yaml", env: {} },
    );
    const [a, b] = ok.servers as Array<{ oauth?: Record<string, string> }>;
    expect(a!.oauth).toEqual({
      grant: "authorization_code",
      redirectUrl: "http://127.0.0.1:8421/callback",
      clientName: "mcplex",
    });
    expect(b!.oauth).toMatchObject({
      clientId: "mcplex-b",
      scope: "read write",
      redirectUrl: "http://127.0.0.1:9999/cb",
    });
    // The client secret is a credential: error messages and summaries redact it.
    expect(ok.secrets).toContain("s3cret-value");

    const bad = errorOf(
      [
        "servers:",
        "  c:",
        "    url: wss://c.example/mcp",
        "    oauth: true",
        "  d:",
        "    url: https://d.example/mcp",
        "    oauth:",
        "      clientSecret: x",
        "      redirectUri: http://127.0.0.1/cb",
      ].join("\n"),
    );
    const at = (path: string) => bad.issues.find((i) => i.path === path)?.message;
    expect(at("servers.c.oauth")).toContain("OAuth is for http(s) servers");
    expect(at("servers.d.oauth")).toBe("a client secret or private key needs its clientId");
    expect(at("servers.d.oauth.redirectUri")).toContain('did you mean "redirectUrl"?');

    const machine = errorOf(
      [
        "servers:",
        "  e:",
        "    url: https://e.example/mcp",
        "    oauth: { grant: client_credentials, clientId: svc }",
        "  f:",
        "    url: https://f.example/mcp",
        "    oauth: { grant: password }",
      ].join("\n"),
    );
    expect(machine.issues.find((i) => i.path === "servers.e.oauth")?.message).toBe(
      "client_credentials needs clientId and either clientSecret or privateKey",
    );
    expect(machine.issues.find((i) => i.path === "servers.f.oauth.grant")?.message).toContain(
      "use authorization_code, client_credentials, jwt-bearer or id-jag",
    );
  });
});
