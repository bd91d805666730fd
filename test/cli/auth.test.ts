import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthFixture, startOAuthFixture } from "../fixtures/servers/oauth-fixture.js";
import { CLI, type CliResult, runCli } from "../support/cli.js";

let dir: string;
let config: string;
let env: Record<string, string>;
let server: OAuthFixture;
/** Everything the CLI printed, to check that no token ever shows. */
const printed: string[] = [];

/** A loopback port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-auth-"));
  env = { MCPLEX_HOME: dir, MCPLEX_SECRET_KEY: "c".repeat(64) };
  server = await startOAuthFixture();
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  guarded:",
      `    url: ${server.url}`,
      "    oauth:",
      `      redirectUrl: http://127.0.0.1:${await freePort()}/callback`,
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<CliResult> {
  const result = await runCli([...args, "--config", config], { env });
  printed.push(result.stdout, result.stderr);
  return result;
}

const callEcho = () => cli("call", "guarded__echo", '{"message":"through OAuth"}');

/**
 * Runs `mcplex auth login guarded` and plays the browser: opens the printed URL (the
 * fixture approves at once and redirects) and follows the redirect to mcplex's listener.
 */
async function login(): Promise<{ code: number | null; stderr: string; page: string }> {
  const child = spawn(
    process.execPath,
    [CLI, "auth", "login", "guarded", "--no-browser", "--config", config],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  const exited = new Promise<number | null>((done) => child.on("close", done));
  const url = await new Promise<string>((found, fail) => {
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match = /^ {2}(http\S+)$/m.exec(stderr);
      if (match !== null && stderr.includes("Waiting for")) found(match[1]!);
    });
    void exited.then(() => fail(new Error(`login exited before printing a URL:\n${stderr}`)));
  });
  const approval = await fetch(url, { redirect: "manual" });
  expect(approval.status).toBe(302);
  const page = await (await fetch(approval.headers.get("location")!)).text();
  const code = await exited;
  printed.push(stderr);
  return { code, stderr, page };
}

// Every test runs the CLI as a process, some of them several in turn: beside the conformance
// suite on two cores, one of them took more than the default 30 s in a clean-clone run.
describe("OAuth servers from the command line", { timeout: 90_000 }, () => {
  it("before any login, says which command authorizes the server", async () => {
    const { code, stderr } = await callEcho();
    expect(code).toBe(3);
    expect(stderr).toContain("guarded: the server needs an OAuth authorization");
    expect(stderr).toContain('mcplex auth login guarded"');
    const list = await cli("list");
    expect(list.stdout).toMatch(/^ {4}hint: Run "mcplex auth login guarded" once/m);
  });

  it("mcplex serve says at start which server needs a login, and keeps serving", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--config", config], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    await new Promise<void>((started, fail) => {
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        // Both, in whichever order: under load the server's refusal may come after the banner.
        if (stderr.includes("Ctrl-C stops it.") && stderr.includes("needs an OAuth authorization")) started();
      });
      child.on("close", () => fail(new Error(`serve exited:\n${stderr}`)));
    });
    const exited = new Promise((done) => child.on("close", done));
    child.kill("SIGTERM");
    await exited;
    printed.push(stderr);
    expect(stderr).toContain("guarded: the server needs an OAuth authorization");
    expect(stderr).toContain('  hint: Run "mcplex auth login guarded" once');
    expect(stderr).toContain("mcplex gateway: 0 of 1 servers ready");
  });

  it("logs in through the browser's redirect, then calls with the stored token", async () => {
    const { code, stderr, page } = await login();
    expect(code).toBe(0);
    expect(page).toContain("guarded is authorized");
    expect(stderr).toContain("guarded is authorized; its tokens are kept in");
    const call = await callEcho();
    expect(call.code).toBe(0);
    expect(call.stdout).toContain("through OAuth");
  });

  it("refreshes an access token the server no longer accepts, without asking anyone", async () => {
    const refreshes = server.grants.refresh_token ?? 0;
    server.expireAccessTokens();
    const call = await callEcho();
    expect(call.code).toBe(0);
    expect(call.stdout).toContain("through OAuth");
    expect(server.grants.refresh_token).toBe(refreshes + 1);
  });

  it("never prints a token", () => {
    const all = printed.join("\n");
    expect(server.liveTokens.size).toBeGreaterThan(0);
    for (const token of server.liveTokens) expect(all).not.toContain(token);
  });

  it("forgets the tokens on logout, so the server needs a login again", async () => {
    const out = await cli("auth", "logout", "guarded");
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("forgot the OAuth tokens of guarded");
    expect((await callEcho()).code).toBe(3);
  });

  it("names a secret store it cannot read, with what to do", async () => {
    const home = join(dir, "broken-home");
    await mkdir(home);
    await writeFile(join(home, "secrets.enc"), "not a store\n");
    const out = await runCli(["call", "guarded__echo", "{}", "--config", config], {
      env: { ...env, MCPLEX_HOME: home },
    });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(
      `secret store ${join(home, "secrets.enc")} is truncated or not a mcplex secret store`,
    );
    expect(out.stderr).toContain("hint: restore it from a backup");
  });

  it("refuses to log in to a server that is not configured for OAuth, saying what to add", async () => {
    const plain = join(dir, "plain.yaml");
    await writeFile(plain, `servers:\n  open:\n    url: ${server.url}\n`);
    const out = await runCli(["auth", "login", "open", "--config", plain], { env });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('open is not configured for OAuth: add "oauth: true"');
  });
});
