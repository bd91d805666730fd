import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/index.js";
import { mcplexDocument } from "../../src/config/mcplex-document.js";
import {
  fillUserPlaceholders,
  optionFromValue,
  userValueProblem,
} from "../../src/config/user-placeholders.js";
import { issuesOf } from "../support/config-errors.js";

const read = (text: string, env: Record<string, string> = {}) =>
  parseConfig(text, { source: "mcplex.yaml", env });

describe("credentials", () => {
  it("is absent (shared) by default and when written shared, as today", () => {
    expect(read("servers:\n  a:\n    command: x\n").servers[0]).not.toHaveProperty("credentials");
    expect(read("servers:\n  a:\n    command: x\n    credentials: shared\n").servers[0]).not.toHaveProperty(
      "credentials",
    );
  });

  it("reads per-user on stdio and remote servers, with maxUsers", () => {
    expect(
      read("servers:\n  a:\n    command: x\n    credentials: per-user\n    maxUsers: 3\n").servers[0],
    ).toMatchObject({ credentials: "per-user", maxUsers: 3 });
    expect(
      read("servers:\n  a:\n    url: https://h/mcp\n    credentials: per-user\n").servers[0],
    ).toMatchObject({
      credentials: "per-user",
    });
  });

  it("reads an exchange on a remote server, its client secret kept as a secret", () => {
    const config = read(
      "servers:\n  a:\n    url: https://h/mcp\n    credentials:\n      exchange:\n        audience: https://h\n" +
        "        scopes: [read, write]\n        clientId: mcplex\n        clientSecret: s3cr3t-value\n",
    );
    expect(config.servers[0]).toMatchObject({
      credentials: {
        exchange: {
          audience: "https://h",
          scopes: ["read", "write"],
          clientId: "mcplex",
          clientSecret: "s3cr3t-value",
        },
      },
    });
    expect(config.secrets).toContain("s3cr3t-value");
  });

  it("names a value that is not one, with the allowed values", () => {
    const [issue] = issuesOf("servers:\n  a:\n    command: x\n    credentials: mine\n");
    expect(issue?.path).toBe("servers.a.credentials");
    expect(issue?.message).toContain(
      '"mine" is not valid; use "shared" (the default), "per-user", { exchange: { audience, clientId } } or { idJag:',
    );
  });

  it("refuses an exchange on a stdio server, and anything but shared on the workspace", () => {
    const [stdio] = issuesOf(
      "servers:\n  a:\n    command: x\n    credentials:\n      exchange: { audience: x, clientId: y }\n",
    );
    expect(stdio?.path).toBe("servers.a.credentials");
    expect(stdio?.message).toContain('a stdio server takes "per-user"');
    const [workspace] = issuesOf("servers:\n  w:\n    type: workspace\n    credentials: per-user\n");
    expect(workspace?.path).toBe("servers.w.credentials");
    expect(workspace?.message).toContain('only "shared" applies');
  });

  it("names the missing and unknown keys of an exchange at their path", () => {
    const issues = issuesOf(
      "servers:\n  a:\n    url: https://h/mcp\n    credentials:\n      exchange: { audiense: x, issuer: nope }\n",
    );
    const paths = issues.map((i) => i.path);
    expect(paths).toContain("servers.a.credentials.exchange.audiense");
    expect(paths).toContain("servers.a.credentials.exchange.issuer");
    expect(issues.find((i) => i.message.includes('needs "audience"'))?.path).toBe(
      "servers.a.credentials.exchange",
    );
    expect(issues.find((i) => i.message.includes('needs "clientId"'))?.path).toBe(
      "servers.a.credentials.exchange",
    );
  });

  it("refuses maxUsers on a shared server", () => {
    const [issue] = issuesOf("servers:\n  a:\n    command: x\n    maxUsers: 4\n");
    expect(issue?.path).toBe("servers.a.maxUsers");
    expect(issue?.message).toContain('add "credentials: per-user"');
  });
});

describe("${user:NAME}", () => {
  it("is kept as written in a per-user server's env, args and headers, beside expanded ${VAR}", () => {
    const config = read(
      "servers:\n  a:\n    command: x\n    credentials: per-user\n    args: ['--user=${user:LOGIN}', '${HOME}']\n" +
        "    env: { API_TOKEN: '${user:API_TOKEN}', REGION: '${REGION}' }\n" +
        "  b:\n    url: https://h/mcp\n    credentials: per-user\n    headers: { Authorization: 'Bearer ${user:KEY}' }\n",
      { HOME: "/home/x", REGION: "eu" },
    );
    expect(config.servers[0]).toMatchObject({
      args: ["--user=${user:LOGIN}", "/home/x"],
      env: { API_TOKEN: "${user:API_TOKEN}", REGION: "eu" },
    });
    expect(config.servers[1]).toMatchObject({ headers: { Authorization: "Bearer ${user:KEY}" } });
    // The placeholder is no secret: redacting its text would hide the config's own words.
    expect(config.secrets).not.toContain("${user:API_TOKEN}");
  });

  it("in a shared server is an error saying to set credentials: per-user", () => {
    const [issue] = issuesOf("servers:\n  a:\n    command: x\n    env: { TOKEN: '${user:TOKEN}' }\n");
    expect(issue?.path).toBe("servers.a.env.TOKEN");
    expect(issue?.message).toContain('add "credentials: per-user" to this server');
  });

  it("is refused where it is never filled (command, url), and with a default", () => {
    const [command] = issuesOf("servers:\n  a:\n    command: '${user:BIN}'\n    credentials: per-user\n");
    expect(command?.path).toBe("servers.a.command");
    expect(command?.message).toContain("filled only in env values, args and headers");
    const [fallback] = issuesOf(
      "servers:\n  a:\n    command: x\n    credentials: per-user\n    env: { T: '${user:T:-x}' }\n",
    );
    expect(fallback?.path).toBe("servers.a.env.T");
    expect(fallback?.message).toContain("cannot have a default");
  });

  it("is filled per user, and a name without a value is reported, not sent", () => {
    const missing: string[] = [];
    expect(fillUserPlaceholders("k=${user:A} ${user:B}", { A: "1" }, (n) => missing.push(n))).toBe(
      "k=1 ${user:B}",
    );
    expect(missing).toEqual(["B"]);
  });

  it("never lets a value start an argument with '-' where the config starts it with the placeholder", () => {
    expect(optionFromValue("${user:A}", { A: "--inject-flag=1" })).toBe("A");
    expect(optionFromValue("${user:A}${user:B}", { A: "", B: "-x" })).toBe("B");
    expect(optionFromValue("--site=${user:A}", { A: "-x" })).toBeUndefined();
    expect(optionFromValue("${user:A}", { A: "plain" })).toBeUndefined();
    expect(userValueProblem(["run", "${user:A}"], "A", "-rf")).toContain('${user:A} may not start with "-"');
    expect(userValueProblem(["--tag=${user:A}"], "A", "-rf")).toBeUndefined();
  });
});

describe("an mcplex file written from a config", () => {
  it("keeps credentials, maxUsers, ${user:NAME} and users:", () => {
    const text =
      "users:\n  maxPerUser: 2\nservers:\n  a:\n    command: x\n    env: { T: '${user:T}' }\n    credentials: per-user\n    maxUsers: 3\n" +
      "  b:\n    url: https://h/mcp\n    credentials:\n      exchange: { audience: https://h, clientId: c }\n";
    const config = read(text);
    const again = read(stringify(mcplexDocument(config)));
    expect(again.servers).toEqual(config.servers);
    expect(again.users).toEqual({ maxPerUser: 2 });
  });
});

describe("users", () => {
  it("reads the caps and the idle stop, and names a bad value at its path", () => {
    expect(read("users:\n  maxConnections: 10\n  maxPerUser: 2\n  idleTimeout: 30s\n").users).toEqual({
      maxConnections: 10,
      maxPerUser: 2,
      idleTimeout: 30_000,
    });
    const issues = issuesOf("users:\n  maxConections: 10\n  idleTimeout: soon\n");
    expect(issues.map((i) => i.path).sort()).toEqual(["users.idleTimeout", "users.maxConections"]);
    expect(issues.find((i) => i.path === "users.maxConections")?.message).toContain(
      'did you mean "maxConnections"?',
    );
  });
});
