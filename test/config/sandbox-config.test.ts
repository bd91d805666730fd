/** `sandbox:` per server and as the top-level default: what it reads to, and the problems it names. */
import { describe, expect, it } from "vitest";
import { mcplexDocument } from "../../src/config/mcplex-document.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import type { StdioServerConfig } from "../../src/config/types.js";
import { issuesOf } from "../support/config-errors.js";

const read = (text: string) =>
  parseConfig(text, { source: "/etc/mcplex/mcplex.yaml", env: {} }).servers as StdioServerConfig[];

describe("sandbox:", () => {
  it("true means the defaults, and a map overrides some of them with paths resolved", () => {
    const [plain, tuned] = read(`
servers:
  plain: { command: srv, sandbox: true }
  tuned:
    command: srv
    sandbox:
      fs: { read: [./data, /srv/shared], write: [out] }
      network: [api.github.com, "*.example.com", "127.0.0.1:8080"]
      memory: 512MiB
      processes: 64
      files: 256
`);
    expect(plain?.sandbox).toEqual(SANDBOX_DEFAULTS);
    expect(tuned?.sandbox).toEqual({
      fs: { read: ["/etc/mcplex/data", "/srv/shared"], write: ["/etc/mcplex/out"] },
      network: ["api.github.com", "*.example.com", "127.0.0.1:8080"],
      memory: 512 * 1024 ** 2,
      processes: 64,
      files: 256,
    });
  });

  it("the top-level default applies to stdio servers that say nothing, and false opts one out", () => {
    const [defaulted, own, out] = read(`
sandbox: { network: all }
servers:
  defaulted: { command: srv }
  own: { command: srv, sandbox: { network: none } }
  out: { command: srv, sandbox: false }
  remote: { url: "https://example.com/mcp" }
`);
    expect(defaulted?.sandbox).toEqual({ ...SANDBOX_DEFAULTS, network: "all" });
    expect(own?.sandbox).toMatchObject({ network: "none" });
    expect(out?.sandbox).toBe(false);
  });

  it("is written back by the mcplex document (convert), reading to the same servers", () => {
    const servers = read(`
servers:
  plain: { command: srv, sandbox: true }
  tuned: { command: srv, sandbox: { fs: { read: [/srv/a] }, network: [api.github.com], memory: 256MiB } }
  out: { command: srv, sandbox: false }
`);
    const doc = mcplexDocument({
      source: "x",
      format: "mcplex",
      servers,
      profiles: {},
      tokens: [],
      secrets: [],
    });
    expect((doc.servers as Record<string, { sandbox: unknown }>).plain?.sandbox).toBe(true);
    expect(read(JSON.stringify(doc))).toEqual(servers);
  });

  it("names each wrong key, value and host with the fix", () => {
    const issues = issuesOf(`
servers:
  a:
    command: srv
    sandbox: { network: some, memory: lots, processes: 0, fs: { exec: [] } , disk: 1 }
  b:
    command: srv
    sandbox: { network: ["http://api.github.com/"] }
  c: { url: "https://example.com/mcp", sandbox: true }
`);
    const paths = issues.map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "servers.a.sandbox.network",
        "servers.a.sandbox.memory",
        "servers.a.sandbox.processes",
        "servers.a.sandbox.fs.exec",
        "servers.a.sandbox.disk",
        "servers.b.sandbox.network[0]",
        "servers.c.sandbox",
      ]),
    );
    const network = issues.find((issue) => issue.path === "servers.a.sandbox.network");
    expect(network?.message).toMatch(/"none", "all" or a list of hosts/);
    const host = issues.find((issue) => issue.path === "servers.b.sandbox.network[0]");
    expect(host?.message).toMatch(/api\.example\.com/);
  });
});
