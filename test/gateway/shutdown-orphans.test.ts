import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { alive } from "../support/wait.js";

// Claude Code stops a stdio server with SIGINT, SIGTERM 0.1 s later, then SIGKILL 0.1 s after
// that. Upstreams that ignore stdin EOF and delay on SIGTERM, with a grandchild each, must
// all be gone after that sequence, and after a plain stdin EOF too.

const STUBBORN = resolve("test/fixtures/servers/stubborn-server.mjs");
let dir: string;
const spawned: number[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-orphans-"));
});
afterEach(() => {
  // Whatever a failing run left behind must not outlive the test file.
  for (const pid of spawned.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Resolves when the file lists `count` pids (each fixture writes its own and its grandchild's). */
async function pidsWritten(file: string, count: number, ms = 60_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pids = (await readFile(file, "utf8").catch(() => ""))
      .split("\n")
      .filter((line) => line !== "")
      .map(Number);
    if (pids.length >= count) {
      spawned.push(...pids);
      return pids;
    }
    if (Date.now() > deadline) throw new Error(`only ${pids.length} of ${count} pids written in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids still alive once each has had `ms` to go. */
async function survivors(pids: number[], ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(alive);
}

async function serveStdio(
  name: string,
  silent: string[] = [],
): Promise<{ child: ChildProcess; pids: string }> {
  const pids = join(dir, `${name}.pids`);
  const lines = ["servers:"];
  for (const server of ["a", "b", "c"]) {
    lines.push(`  ${server}:`, `    command: ${JSON.stringify(process.execPath)}`);
    lines.push(`    args: ${JSON.stringify([STUBBORN])}`);
    // A distinct env each, or the hub would share one connection between them.
    lines.push("    env:", `      STUBBORN_PIDS: ${JSON.stringify(pids)}`, `      STUBBORN_NAME: ${server}`);
    if (silent.includes(server)) lines.push(`      STUBBORN_SILENT: "1"`);
  }
  const config = join(dir, `${name}.yaml`);
  await writeFile(config, `${lines.join("\n")}\n`);
  const child = spawn(process.execPath, [CLI, "serve", "--stdio", "--config", config], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  spawned.push(child.pid!);
  child.stderr!.resume();
  return { child, pids };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
  );
}

describe("mcplex serve --stdio leaves no process behind", () => {
  it("when stopped with SIGINT, SIGTERM 100 ms later, then SIGKILL", async () => {
    const { child, pids } = await serveStdio("signals");
    // Ready: the gateway answers initialize once the servers have started.
    const answered = new Promise<void>((r) => child.stdout!.once("data", () => r()));
    child.stdin!.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
    await answered;
    const all = await pidsWritten(pids, 6);
    const gone = exited(child);
    child.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGKILL");
    await gone;
    expect(await survivors(all)).toEqual([]);
  }, 90_000);

  it("when it is killed with SIGKILL alone", async () => {
    const { child, pids } = await serveStdio("sigkill");
    const all = await pidsWritten(pids, 6);
    const gone = exited(child);
    child.kill("SIGKILL");
    await gone;
    expect(await survivors(all)).toEqual([]);
  }, 90_000);

  it("when stdin ends while a server is still starting", async () => {
    const { child, pids } = await serveStdio("eof", ["c"]);
    const all = await pidsWritten(pids, 6);
    const gone = exited(child);
    child.stdin!.end();
    await gone; // before the fix: not until the silent server's start timed out, and then hung

    expect(child.exitCode).toBe(0);
    expect(await survivors(all)).toEqual([]);
  }, 90_000);
});
