import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import {
  COMMANDS,
  postRev2026,
  rawHttp,
  resultText,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";
import { processGone } from "../support/wait.js";

// `mcplex serve --http` as a user runs it: what it prints, its token, how it refuses an
// unprotected public bind, and how it stops.

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-cli-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(config, yamlConfig({ fx: COMMANDS.fixture, legacy: COMMANDS.legacyFixture }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("mcplex serve --http --token", () => {
  let gw: ServeProcess;
  const auth = { authorization: "Bearer cli-secret-0123456789" };
  beforeAll(async () => {
    gw = await serveHttp(["--config", config, "--token", "cli-secret-0123456789"]);
  });
  afterAll(() => gw?.stop("SIGKILL"));

  it("prints the endpoint and how to add it to Claude Code, Cursor and VS Code", () => {
    const out = gw.stderr();
    expect(out).toMatch(/2 of 2 servers ready/);
    expect(out).toContain(`Streamable HTTP  ${gw.url}`);
    expect(out).toContain(`WebSocket        ${gw.wsUrl}`);
    expect(out).toContain(`claude mcp add --transport http mcplex ${gw.url}`);
    expect(out).toContain(`~/.cursor/mcp.json: {"mcpServers":{"mcplex":{"url":"${gw.url}"}}}`);
    expect(out).toContain(`.vscode/mcp.json: {"servers":{"mcplex":{"type":"http","url":"${gw.url}"}}}`);
    expect(out).toContain("Authorization: Bearer <token>");
    expect(out).not.toContain("cli-secret-0123456789");
  });

  it("refuses requests without the --token and serves them with it", async () => {
    const call = rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "cli" } });
    const refused = await postRev2026(gw.url, call);
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toMatch(/^Bearer realm="mcplex"/);
    const served = await postRev2026(gw.url, call, auth);
    expect(served.status).toBe(200);
    expect(resultText((served.json as { result: unknown }).result)).toBe("echo: cli");
  });

  it("explains a port already in use, without a stack trace", async () => {
    const port = new URL(gw.url).port;
    const result = await runCli(["serve", "--http", "--port", port, "--config", config], { timeout: 15_000 });
    expect(result.code).toBe(2); // a port in use is a usage problem (docs/guide/command-line.md: exit codes)
    expect(result.stderr).toContain(`mcplex: cannot listen: 127.0.0.1:${port} is already in use`);
    expect(result.stderr).toContain("hint: stop it, or choose another port with --port");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses an --allow-origin that is not an origin, naming it and the form", async () => {
    const result = await runCli(
      ["serve", "--http", "--port", "0", "--allow-origin", "https://app.test/mcp"],
      {
        timeout: 15_000,
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'mcplex: --allow-origin "https://app.test/mcp" has a path, query or fragment (/mcp); an origin is scheme://host[:port] only',
    );
  });

  it("stops cleanly on SIGTERM and leaves no upstream process behind", async () => {
    const pids: number[] = [];
    for (const name of ["fx__pid", "legacy__pid"]) {
      const res = await postRev2026(gw.url, rev2026Request(name, "tools/call", { name }), auth);
      pids.push(Number(resultText((res.json as { result: unknown }).result)));
    }
    expect(pids.every((pid) => Number.isInteger(pid) && pid > 0)).toBe(true);
    const exit = await gw.stop("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of pids) await processGone(pid, 5000);
    await expect(rawHttp(`${gw.origin}/healthz`, { method: "GET", timeoutMs: 2000 })).rejects.toThrow();
  });
});

describe("mcplex serve --http --host 0.0.0.0 without a token", () => {
  it("refuses to start, explains why, and exits", async () => {
    const result = await runCli(["serve", "--http", "--host", "0.0.0.0", "--port", "0", "--config", config], {
      timeout: 6000,
    });
    expect(result.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without authentication/);
    expect(result.stderr).toMatch(/--token/);
    expect([1, 2]).toContain(result.code);
  });
});

describe("mcplex serve --http --profile P --token T --operator-token O", () => {
  let gw: ServeProcess;
  beforeAll(async () => {
    const scoped = join(dir, "scoped.yaml");
    await writeFile(
      scoped,
      yamlConfig({ fx: COMMANDS.fixture }, "profiles:\n  echoes:\n    tools: { allow: [fx__echo] }\n"),
    );
    gw = await serveHttp([
      "--config",
      scoped,
      "--profile",
      "echoes",
      "--token",
      "agent-secret-0123456789",
      "--operator-token",
      "scrape-secret-0123456789",
    ]);
  });
  afterAll(() => gw?.stop("SIGKILL"));

  it("keeps /metrics and /readyz from the profile's token and opens them to the operator token", async () => {
    const get = (path: string, token: string) =>
      rawHttp(`${gw.origin}${path}`, { method: "GET", headers: { authorization: `Bearer ${token}` } });
    for (const path of ["/metrics", "/readyz"]) {
      const refused = await get(path, "agent-secret-0123456789");
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatch(/operator endpoint/);
      expect((await get(path, "scrape-secret-0123456789")).status, path).toBe(200);
    }
    // The operator token is bound to the profile for MCP like the others.
    const call = rev2026Request(1, "tools/call", { name: "fx__pid", arguments: {} });
    const res = await postRev2026(gw.url, call, { authorization: "Bearer scrape-secret-0123456789" });
    expect((res.json as { error?: { code: number } }).error?.code).toBe(-32602);
    expect(gw.stderr()).not.toContain("scrape-secret-0123456789");
  });
});
