/**
 * A sandboxed probe server (test/fixtures/servers/sandbox-probe-server.mjs) tries what the sandbox
 * must stop: reading outside its paths, writing outside its temp dir, reaching a loopback port not
 * on its list (directly and through the proxy), forking and allocating without limit. Each is
 * stopped, while the allowed paths and the one allowed host are reached.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

const PROBE = "test/fixtures/servers/sandbox-probe-server.mjs";
const dir = mkdtempSync(join(tmpdir(), "mcplex-sandbox-probe-"));
const secret = join(dir, "secret.txt");
const readable = join(dir, "readable");
const writable = join(dir, "writable");
const servers: Server[] = [];
let allowedPort = 0;
let deniedPort = 0;
let hub: Hub;

async function listen(body: string): Promise<number> {
  const server = createServer((_req, res) => res.end(body));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

type Outcome = { ok: boolean; code?: string; status?: number; body?: string; [key: string]: unknown };

async function probe(kind: string, args: Record<string, unknown>): Promise<Outcome> {
  const result = await hub.callTool("probe__probe", { kind, ...args });
  const text = (result.content[0] as { text: string }).text;
  const outcome = JSON.parse(text) as Outcome;
  reportFigure(`sandbox probe ${kind} ${JSON.stringify(args)}`, text);
  return outcome;
}

beforeAll(async () => {
  mkdirSync(readable);
  mkdirSync(writable);
  writeFileSync(secret, "not for the sandbox");
  writeFileSync(join(readable, "notes.txt"), "readable notes");
  allowedPort = await listen("allowed host reached");
  deniedPort = await listen("denied host reached");
  const sandbox = {
    ...SANDBOX_DEFAULTS,
    fs: { read: [readable], write: [writable] },
    network: [`127.0.0.1:${allowedPort}`],
    memory: 256 * 1024 ** 2,
    processes: 64,
  };
  hub = new Hub({ config: configOf([stdio("probe", "node", [PROBE], { sandbox } as never)]) });
  await hub.start();
  const [server] = hub.servers();
  if (server?.state !== "ready") throw new Error(`the probe did not start: ${JSON.stringify(server)}`);
}, 30_000);

afterAll(async () => {
  await hub?.close();
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a sandboxed server", () => {
  it("reads the paths it was given, and nothing else of the disk or the home directory", async () => {
    expect(await probe("read", { path: join(readable, "notes.txt") })).toMatchObject({
      ok: true,
      text: "readable notes",
    });
    expect(await probe("read", { path: secret })).toMatchObject({ ok: false, code: "ENOENT" });
    expect(await probe("read", { path: join(process.env.HOME ?? "/root", ".bashrc") })).toMatchObject({
      ok: false,
    });
    expect(await probe("read", { path: "/etc/shadow" })).toMatchObject({ ok: false, code: "ENOENT" });
  });

  it("writes its temp dir and its write paths only", async () => {
    expect(await probe("write", { path: "/tmp/scratch.txt" })).toMatchObject({ ok: true });
    expect(await probe("write", { path: join(writable, "out.txt") })).toMatchObject({ ok: true });
    expect(readFileSync(join(writable, "out.txt"), "utf8")).toContain("from the sandbox");
    expect(await probe("write", { path: join(readable, "notes.txt") })).toMatchObject({
      ok: false,
      code: "EROFS",
    });
    expect(await probe("write", { path: "/usr/local/planted" })).toMatchObject({ ok: false, code: "EROFS" });
    // The host's /tmp is out of sight: a write to the same path lands in the sandbox's own.
    await probe("write", { path: secret });
    expect(readFileSync(secret, "utf8")).toBe("not for the sandbox");
    // The project's directory is read-only inside; a clone under /tmp is behind the sandbox's
    // own /tmp instead, where the write lands. Either way the host's file is never written.
    const planted = join(process.cwd(), "planted-by-sandbox.txt");
    const written = await probe("write", { path: planted });
    if (!process.cwd().startsWith(`${tmpdir()}/`)) expect(written).toMatchObject({ ok: false });
    expect(existsSync(planted)).toBe(false);
  });

  it("reaches the allowed host through the proxy, and no other port directly or through it", async () => {
    expect(await probe("fetch", { url: `http://127.0.0.1:${allowedPort}/` })).toMatchObject({
      ok: true,
      body: "allowed host reached",
    });
    expect(await probe("tunnel", { host: "127.0.0.1", port: allowedPort })).toMatchObject({
      ok: true,
      body: "allowed host reached",
    });
    expect(await probe("connect", { host: "127.0.0.1", port: deniedPort })).toMatchObject({
      ok: false,
      code: "ECONNREFUSED",
    });
    expect(await probe("connect", { host: "127.0.0.1", port: allowedPort })).toMatchObject({ ok: false });
    expect(await probe("fetch", { url: `http://127.0.0.1:${deniedPort}/` })).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(await probe("tunnel", { host: "127.0.0.1", port: deniedPort })).toMatchObject({
      ok: false,
      status: 403,
    });
  });

  it(
    "cannot allocate past its memory limit",
    async () => {
      const outcome = await probe("alloc", { mib: attackSize(1024, 8192) });
      expect(outcome.ok).toBe(false);
      expect(String(outcome.stderr)).toMatch(/out of memory|allocation failed/i);
    },
    attackTimeout(30_000, 120_000),
  );

  it(
    "cannot fill its private /tmp past its memory limit",
    async () => {
      const outcome = await probe("fill", { path: "/tmp/filler", mib: attackSize(512, 4096) });
      expect(outcome).toMatchObject({ ok: false, code: "ENOSPC" });
      expect(outcome.written as number).toBeLessThanOrEqual(256);
    },
    attackTimeout(30_000, 120_000),
  );

  it(
    "cannot start processes past its limit",
    async () => {
      const outcome = await probe("fork", { count: attackSize(200, 2000) });
      expect(outcome).toMatchObject({ ok: false, code: "EAGAIN" });
      expect(outcome.started as number).toBeLessThan(64);
    },
    attackTimeout(30_000, 120_000),
  );
});
