import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RpcError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { CLI, runCli } from "../support/cli.js";
import { configOf, stdio } from "../support/config.js";
import { postRev2026, rev2026Request, serveHttp } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// An upstream quotes the secret it was given in errors, isError results and stderr, raw and
// encoded: none of it may reach a client, the CLI's output or the hub's error messages.
const LEAKY = resolve("test/fixtures/servers/leaky-server.mjs");
const SECRET = 'tok"en\\9f/ab+cd ef&gh=ij%kl~Zq';

/** Every 6-byte piece of the secret: a leak is any of them, found raw or decoded. */
const PIECES = Array.from({ length: SECRET.length - 5 }, (_, i) => SECRET.slice(i, i + 6));

/** Where `text` shows the secret, in any form the fixture writes; empty when nowhere. */
function leaks(text: string): string[] {
  const found: string[] = [];
  const views = [text, text.replaceAll("\\\\", "\\").replaceAll('\\"', '"')];
  // Runs that may be base64 or percent-encoding, decoded at each of the 4 character phases.
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    for (let phase = 0; phase < 4; phase++) {
      const chunk = run.slice(phase);
      views.push(Buffer.from(chunk.replaceAll("-", "+").replaceAll("_", "/"), "base64").toString("latin1"));
    }
  }
  for (const run of text.match(/[A-Za-z0-9%._~*!'()-]{8,}/g) ?? []) {
    try {
      views.push(decodeURIComponent(run));
    } catch {}
  }
  for (const view of views) for (const piece of PIECES) if (view.includes(piece)) found.push(piece);
  return [...new Set(found)];
}

let dir: string;
let home: string;
let config: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-leaks-"));
  home = join(dir, "home");
  env = { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: "c".repeat(64) };
  const set = await runCli(["secrets", "set", "LEAK"], { env, input: `${SECRET}\n` });
  expect(set.code, set.stderr).toBe(0);
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  leaky:",
      `    command: ${process.execPath}`,
      `    args: [${LEAKY}]`,
      "    env:",
      "      LEAK_TOKEN: ${secret:LEAK}",
      "  crashy:",
      `    command: ${process.execPath}`,
      `    args: [${LEAKY}, --crash]`,
      "    env:",
      "      LEAK_TOKEN: ${secret:LEAK}",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("an upstream that quotes its secret", { timeout: attackTimeout(90_000, 600_000) }, () => {
  it("the fixture's leak check finds every form before redaction", () => {
    const b64 = (t: string) => Buffer.from(t).toString("base64");
    for (const form of [
      SECRET,
      JSON.stringify(SECRET),
      b64(SECRET),
      b64(`xy${SECRET}`),
      encodeURIComponent(SECRET),
    ])
      expect(leaks(`before ${form} after`)).not.toEqual([]);
  });

  it("hides it from the hub's errors, isError results, log notifications and stderr tails", async () => {
    const leaky = stdio("leaky", process.execPath, [LEAKY], { env: { LEAK_TOKEN: SECRET } });
    const crashy = stdio("crashy", process.execPath, [LEAKY, "--crash"], { env: { LEAK_TOKEN: SECRET } });
    const hub = new Hub({ config: configOf([leaky, crashy], { secrets: [SECRET] }) });
    try {
      await hub.start();
      const calls = attackSize(3, 300);
      for (let i = 0; i < calls; i++) {
        const error = await hub.callTool("leaky__leak").then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(RpcError);
        expect((error as RpcError).code).toBe(-32001);
        expect(leaks((error as RpcError).message)).toEqual([]);
        expect(leaks(JSON.stringify((error as RpcError).data))).toEqual([]);
        const result = await hub.callTool("leaky__leak_result");
        expect(result.isError).toBe(true);
        expect(leaks(JSON.stringify(result))).toEqual([]);
      }
      // A log notification quoting it (relayed to the gateway's clients) is redacted too.
      const logged: string[] = [];
      const off = hub.on((event) => {
        if (event.type === "notification" && event.method === "notifications/message")
          logged.push(JSON.stringify(event.params));
      });
      await hub.callTool("leaky__leak_log");
      off();
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain("login with");
      expect(leaks(logged[0]!)).toEqual([]);
      const crashed = hub.servers().find((s) => s.name === "crashy");
      expect(crashed?.error).toContain("fatal: token rejected");
      expect(leaks(JSON.stringify(hub.servers()))).toEqual([]);
      reportFigure(
        "secret leaks through the hub",
        `${calls} error calls and ${calls} isError results, none leaked`,
      );
    } finally {
      await hub.close();
    }
  });

  it("hides it from a client of the gateway", async () => {
    const client = new Client({ name: "leak-test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "serve", "--stdio", "--config", config],
        stderr: "ignore",
        env: { ...getDefaultEnvironment(), ...env },
      }),
    );
    try {
      const error = await client.callTool({ name: "leaky__leak", arguments: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeDefined();
      expect(String((error as Error).message)).toContain("auth failed");
      expect(
        leaks(`${(error as Error).message} ${JSON.stringify((error as { data?: unknown }).data)}`),
      ).toEqual([]);
      const result = await client.callTool({ name: "leaky__leak_result", arguments: {} });
      expect(result.isError).toBe(true);
      expect(leaks(JSON.stringify(result))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("hides it from progress messages over a 2026 POST, /ws and a 2025 stdio session, as from log messages", async () => {
    const gw = await serveHttp(["--config", config], { env });
    const ws = new WebSocket(gw.wsUrl, "mcp");
    const frames: Array<{ id?: unknown; method?: string; params?: unknown }> = [];
    let answered: ((id: unknown) => void) | undefined;
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { id?: unknown; method?: string };
      frames.push(frame);
      if (frame.method === undefined) answered?.(frame.id);
    });
    try {
      await once(ws, "open");
      const call = (id: number) =>
        rev2026Request(id, "tools/call", {
          name: "leaky__leak_progress",
          arguments: {},
          _meta: { progressToken: `p${id}`, "io.modelcontextprotocol/logLevel": "debug" },
        });
      /** The progress and log messages a call delivered, checked for the secret in any form. */
      const check = (front: string, messages: Array<{ method?: string; params?: unknown }>) => {
        const progress = messages.filter((m) => m.method === "notifications/progress");
        const logged = messages.filter((m) => m.method === "notifications/message");
        expect({ front, progress: progress.length, logged: logged.length }).toEqual({
          front,
          progress: 1,
          logged: 1,
        });
        expect(JSON.stringify(progress[0])).toContain("step with");
        expect({ front, leaks: leaks(JSON.stringify(messages)) }).toEqual({ front, leaks: [] });
      };
      const calls = attackSize(2, 100);
      for (let i = 1; i <= calls; i++) {
        const post = await postRev2026(gw.url, call(i));
        expect(post.status).toBe(200);
        check("2026 POST", post.messages as Array<{ method?: string }>);
        frames.length = 0;
        const done = new Promise((resolve) => {
          answered = resolve;
        });
        ws.send(JSON.stringify(call(calls + i)));
        await done;
        check("/ws", frames);
      }
      // A 2025 session over stdio, read raw (the SDK client drops a progress notification
      // that arrives right before its answer).
      const child = spawn(process.execPath, [CLI, "serve", "--stdio", "--config", config], {
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "ignore"],
      });
      try {
        const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
        const write = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`);
        /** The messages read up to the answer to `id`, that answer included. */
        const until = async (id: number) => {
          const read: Array<{ id?: unknown; method?: string }> = [];
          for (;;) {
            const next = await lines.next();
            if (next.done === true) throw new Error("mcplex serve --stdio ended");
            const message = JSON.parse(next.value) as { id?: unknown; method?: string };
            read.push(message);
            if (message.method === undefined && message.id === id) return read;
          }
        };
        write({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "leak", version: "1" },
          },
        });
        await until(0);
        write({ jsonrpc: "2.0", method: "notifications/initialized" });
        for (let i = 1; i <= calls; i++) {
          write({
            jsonrpc: "2.0",
            id: i,
            method: "tools/call",
            params: { name: "leaky__leak_progress", arguments: {}, _meta: { progressToken: `s${i}` } },
          });
          check("stdio", await until(i));
        }
      } finally {
        child.kill();
      }
      reportFigure("secret leaks through progress", `${calls} calls on each of 3 fronts, none leaked`);
    } finally {
      ws.close();
      await gw.stop();
    }
  });

  it("hides it from mcplex call, list, list --json and doctor", async () => {
    const runs = {
      call: await runCli(["call", "leaky__leak", "--config", config], { env }),
      callResult: await runCli(["call", "leaky__leak_result", "--config", config], { env }),
      callJson: await runCli(["call", "leaky__leak_result", "--json", "--config", config], { env }),
      list: await runCli(["list", "--config", config], { env }),
      listJson: await runCli(["list", "--json", "--config", config], { env }),
      doctor: await runCli(["doctor", "--config", config], {
        env: {
          ...env,
          MCPLEX_LLM_BASE_URL: "",
          MCPLEX_LLM_MODEL: "",
          MCPLEX_LLM_API_KEY: "",
          MCPLEX_LLM_PROVIDER: "",
        },
      }),
    };
    expect(runs.call.stderr).toContain("auth failed");
    for (const shown of [runs.list, runs.listJson, runs.doctor])
      expect(shown.stdout + shown.stderr).toContain("fatal: token rejected");
    expect(runs.callResult.stdout).toContain("auth failed");
    for (const [name, run] of Object.entries(runs))
      expect({ name, leaks: leaks(run.stdout + run.stderr) }).toEqual({ name, leaks: [] });
  });
});
