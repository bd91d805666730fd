// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkConfig, parseConfig, summarizeConfig } from "../../src/config/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-check-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const summary = (text: string, env: Record<string, string> = {}) =>
  summarizeConfig(parseConfig(text, { source: join(dir, "mcplex.yaml"), env, cwd: dir }));

describe("config check", () => {
  it("summarises servers with transport, state and a redacted target", () => {
    const result = summary(
      "servers:\n  gh:\n    command: npx\n    args: [-y, server github]\n    lazy: true\n  api:\n    url: https://h/mcp?token=${T}\n    enabled: false\n    prefix: ''\n  ws:\n    type: workspace\n    root: .\n",
      { T: "query-secret-1" },
    );
    expect(result.servers).toEqual([
      expect.objectContaining({
        name: "gh",
        transport: "stdio",
        enabled: true,
        lazy: true,
        prefix: "gh",
        target: 'npx -y "server github"',
      }),
      expect.objectContaining({
        name: "api",
        transport: "streamable-http",
        enabled: false,
        prefix: "",
        target: "https://h/mcp?token=***",
      }),
      expect.objectContaining({ name: "ws", transport: "workspace", target: `${dir} (read-only)` }),
    ]);
    expect(result.warnings).toEqual([]);
  });

  it("marks the servers that run in a sandbox, by their own key or the top-level default", () => {
    const result = summary(
      "sandbox: true\nservers:\n  boxed:\n    command: srv\n  own:\n    command: srv\n    sandbox: false\n  api:\n    url: https://h/mcp\n",
    );
    expect(result.servers.map((s) => [s.name, s.sandboxed ?? false])).toEqual([
      ["boxed", true],
      ["own", false],
      ["api", false],
    ]);
  });

  it("warns about profiles and tokens naming what does not exist", () => {
    const result = summary(
      "servers:\n  a:\n    command: x\nprofiles:\n  dev:\n    servers: [a, ghost]\ntokens:\n  - token: a-long-enough-token\n    profile: nobody\n",
    );
    expect(result.warnings).toEqual([
      { path: "profiles.dev.servers[1]", message: 'unknown server "ghost"' },
      { path: "tokens[0].profile", message: 'unknown profile "nobody"' },
    ]);
    expect(result.profiles).toEqual([{ name: "dev", servers: ["a", "ghost"] }]);
  });

  it("warns when two servers end up with the same name prefix", () => {
    const result = summary(
      "servers:\n  my.srv:\n    command: x\n  my_srv:\n    command: y\n  other:\n    command: z\n    prefix: my_srv\n",
    );
    expect(result.warnings).toEqual([
      {
        path: "servers.my_srv",
        message: expect.stringContaining('servers my.srv, my_srv, other share the name prefix "my_srv"'),
      },
    ]);
  });

  it("warns about a per-user server where no one signs in", () => {
    const result = summary(
      "servers:\n  mine:\n    command: x\n    env: { KEY: '${user:KEY}' }\n    credentials: per-user\n  ours:\n    command: y\n",
    );
    expect(result.warnings).toEqual([
      {
        path: "servers.mine.credentials",
        message: expect.stringContaining("but no one signs in (there is no auth: block)"),
      },
    ]);
  });

  it("warns that per-user connect links rely on client registration at the gateway's provider without auth.dashboard.clientId", () => {
    const servers =
      "servers:\n  mine:\n    command: x\n    env: { KEY: '${user:KEY}' }\n    credentials: per-user\n";
    const auth =
      "auth:\n  resource: https://mcp.example.com\n  issuers:\n    - issuer: https://id.example.com\n";
    expect(summary(`${servers}${auth}`).warnings).toEqual([
      {
        path: "auth.dashboard.clientId",
        message: expect.stringContaining(
          "redirect URIs https://mcp.example.com/connect/-/signed-in and https://mcp.example.com/dashboard) and set auth.dashboard.clientId",
        ),
      },
    ]);
    expect(summary(`${servers}${auth}  dashboard:\n    clientId: mcplex-page\n`).warnings).toEqual([]);
  });

  it("warns about tool globs that cannot compile", () => {
    const result = summary(
      "servers:\n  a:\n    command: x\n    tools:\n      allow: ['search_[a-z', 'ok_*']\nprofiles:\n  p:\n    tools:\n      deny: ['{a,b']\n",
    );
    expect(result.warnings.map((w) => w.path)).toEqual([
      "servers.a.tools.allow[0]",
      "profiles.p.tools.deny[0]",
    ]);
    expect(result.warnings[0]?.message).toContain('glob "search_[a-z" is invalid');
  });

  it("checks the file system: missing workspace root, missing cwd, command not on PATH", async () => {
    await writeFile(
      join(dir, "mcplex.yaml"),
      "servers:\n  ws:\n    type: workspace\n    root: ./nope\n  tool:\n    command: definitely-not-a-command-xyz\n    cwd: ./gone\n  node:\n    command: node\n",
    );
    const result = await checkConfig({ cwd: dir, env: { PATH: process.env.PATH ?? "" } });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.summary.warnings.map((w) => w.path)).toEqual([
      "servers.ws.root",
      "servers.tool.cwd",
      "servers.tool.command",
    ]);
  });

  it("returns every problem instead of throwing when the config is invalid", async () => {
    await writeFile(join(dir, "mcplex.yaml"), "servers:\n  a:\n    comand: x\n");
    const result = await checkConfig({ cwd: dir, env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).toEqual(["servers.a.comand", "servers.a"]);
  });

  it("checks the embedded default without a file", async () => {
    const result = await checkConfig({ cwd: dir, env: {} });
    expect(result).toMatchObject({
      ok: true,
      summary: { format: "default", servers: [{ name: "workspace" }], warnings: [] },
    });
  });
});

describe("config check with a broken secret store", () => {
  it("reports a secret store it cannot open as a problem with its fix", async () => {
    await writeFile(
      join(dir, "mcplex.yaml"),
      "servers:\n  a:\n    command: x\n    env:\n      T: ${secret:t}\n",
    );
    await writeFile(join(dir, "secrets.enc"), "{not json");
    const result = await checkConfig({ cwd: dir, env: { MCPLEX_HOME: dir } });
    expect(result).toMatchObject({ ok: false, issues: [{ code: "SECRET_STORE_INVALID", path: "" }] });
    if (!result.ok) expect(result.issues[0]?.message).toContain("restore it from a backup");
  });
});

describe("config check: pinned protocol revisions", () => {
  it("rejects a pinned protocolVersion mcplex cannot speak, naming the key and the revisions it can", async () => {
    await writeFile(
      join(dir, "mcplex.yaml"),
      'servers:\n  old:\n    command: node\n    protocolVersion: "1999-01-01"\n',
    );
    const result = await checkConfig({ cwd: dir, env: { PATH: process.env.PATH ?? "" } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const issue = result.issues.find((i) => i.path === "servers.old.protocolVersion");
    expect(issue?.message).toContain("1999-01-01");
    expect(issue?.message).toContain("2025-11-25");
    expect(issue?.message).toContain("2024-11-05");
  });

  it("accepts a pin to 2024-11-05", async () => {
    await writeFile(
      join(dir, "mcplex.yaml"),
      'servers:\n  old:\n    command: node\n    protocolVersion: "2024-11-05"\n',
    );
    const result = await checkConfig({ cwd: dir, env: { PATH: process.env.PATH ?? "" } });
    expect(result.ok).toBe(true);
  });
});
