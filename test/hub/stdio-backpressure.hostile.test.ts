import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import { CLI } from "../support/cli.js";
import { configOf, stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// Many concurrent 4 MB tools/calls through `mcplex serve --stdio` to a stdio upstream that
// reads slowly: the writer to its stdin must respect backpressure (no ENOBUFS, no restart),
// a bystander's small call must get through, and the gateway's peak RSS must stay bounded.

const CALLS = attackSize(32, 256);
const MESSAGE_BYTES = 4_000_000;
/** The documented bound on the gateway's peak RSS under this load (docs/guide/serve-and-connect.md: "Backpressure"). */
const RSS_BOUND_MIB = 400;

let dir: string;
let gateway: ChildProcess;
const answers = new Map<string | number, { result?: unknown; error?: { message: string } }>();
const waiters = new Map<string | number, () => void>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-backpressure-"));
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  slow:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify([resolve("test/fixtures/servers/slow-reader-server.mjs")])}`,
      "    timeout: 10m",
      "",
    ].join("\n"),
  );
  gateway = spawn(process.execPath, [CLI, "serve", "--stdio", "--config", config], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  gateway.stderr!.resume();
  let buffer = "";
  gateway.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (message.id === undefined) continue;
      answers.set(message.id, message);
      waiters.get(message.id)?.();
    }
  });
  await call("init", "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "hostile", version: "1" },
  });
  await write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
});
afterAll(async () => {
  gateway.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

function write(text: string): Promise<void> {
  return new Promise((done) => (gateway.stdin!.write(text) ? done() : gateway.stdin!.once("drain", done)));
}

function answered(id: string | number): Promise<void> {
  return new Promise((done) => (answers.has(id) ? done() : waiters.set(id, done)));
}

async function call(id: string | number, method: string, params: unknown) {
  await write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  await answered(id);
  return answers.get(id)!;
}

function toolText(answer: { result?: unknown }): string {
  return (answer.result as { content: { text: string }[] }).content[0]!.text;
}

/** The peak resident set of a process, from /proc (Linux). */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

describe("many large calls to a slow stdio upstream", () => {
  it(
    "succeed or fail with a clear queue-full error, a bystander's call succeeds, RSS stays bounded",
    async () => {
      const pidBefore = toolText(
        await call("pid-before", "tools/call", { name: "slow__pid", arguments: {} }),
      );
      const data = "x".repeat(MESSAGE_BYTES - 200);
      const head =
        '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"slow__take","arguments":{"data":"';
      for (let i = 0; i < CALLS; i++) await write(`${head}${data}"}},"id":${i}}\n`);
      const bystander = await call("bystander", "tools/call", { name: "slow__pid", arguments: {} });
      await Promise.all(Array.from({ length: CALLS }, (_, i) => answered(i)));

      let ok = 0;
      const failures = new Map<string, number>();
      for (let i = 0; i < CALLS; i++) {
        const answer = answers.get(i)!;
        if (answer.error === undefined && toolText(answer) === String(data.length)) ok++;
        else {
          const message = answer.error?.message ?? JSON.stringify(answer.result).slice(0, 200);
          failures.set(message, (failures.get(message) ?? 0) + 1);
        }
      }
      const peak = peakRssMiB(gateway.pid!);
      reportFigure(
        "stdio backpressure",
        `${CALLS} x 4 MB: ${ok} succeeded, ${CALLS - ok} refused (queue full); gateway peak RSS ${peak.toFixed(0)} MiB (bound ${RSS_BOUND_MIB})`,
      );
      for (const message of failures.keys()) expect(message).toMatch(/queue full/);
      expect(bystander.error).toBeUndefined();
      // The same process answers after the storm: it was never restarted.
      expect(toolText(bystander)).toBe(pidBefore);
      expect(peak).toBeLessThan(RSS_BOUND_MIB);
    },
    attackTimeout(180_000, 900_000),
  );
});

describe("many large calls straight to a slow stdio upstream's queue", () => {
  it(
    "are written as it reads or refused with a queue-full error naming the server, and the bystander gets through",
    async () => {
      const hub = new Hub({
        config: configOf([
          stdio("slow", process.execPath, [resolve("test/fixtures/servers/slow-reader-server.mjs")], {
            timeout: 600_000,
          }),
        ]),
      });
      try {
        await hub.start();
        const pid = await hub.callTool("slow__pid", {});
        const data = "y".repeat(MESSAGE_BYTES - 200);
        const calls = Array.from({ length: CALLS }, () =>
          hub.callTool("slow__take", { data }).then(
            (result) => ({ ok: true as const, text: (result.content as { text: string }[])[0]!.text }),
            (error: Error) => ({ ok: false as const, text: error.message }),
          ),
        );
        const bystander = await hub.callTool("slow__pid", {});
        const outcomes = await Promise.all(calls);
        const refused = outcomes.filter((o) => !o.ok);
        reportFigure(
          "stdio queue",
          `${CALLS} x 4 MB at once: ${CALLS - refused.length} written, ${refused.length} refused (queue full)`,
        );
        for (const o of outcomes) {
          if (o.ok) expect(o.text).toBe(String(data.length));
          else expect(o.text).toMatch(/^slow: write queue full: .* 32 MiB limit; retry when/);
        }
        // A bounded queue at CI size too: 32 MiB of 4 MB messages, then refusals.
        expect(refused.length).toBeGreaterThan(0);
        expect(bystander).toEqual(pid);
      } finally {
        await hub.close();
      }
    },
    attackTimeout(180_000, 900_000),
  );
});
