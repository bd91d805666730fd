import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CLI } from "../support/cli.js";
import {
  postRev2026,
  rawHttp,
  resultText,
  rev2026Request,
  type ServeProcess,
  serveHttp,
} from "../support/gateway.js";
import { attackSize, attackTimeout } from "../support/hostile.js";
import { type FuzzCase, fuzzCase, fuzzHeaders, Rng } from "./fuzz-messages.js";

// Thousands of malformed messages on every front — HTTP POST /mcp, WebSocket and stdio — then
// the gateway must still answer a correct request correctly, with its process alive. The
// gateway runs as `mcplex serve` with no config: the built-in read-only workspace server over a
// temp dir. Seeded: FUZZ_SEED=<n> reproduces a run; FUZZ_COUNT changes how many per front.

const SEED = Number(process.env.FUZZ_SEED ?? 20260728);
// 3000 per front in the suite; under `npm run test:hostile` the tester's 20,000 per front.
const COUNT = Number(process.env.FUZZ_COUNT ?? attackSize(3000, 20_000));
/** Each front stops sending after this long even if COUNT is not reached. */
const BUDGET_MS = attackTimeout(15_000, 300_000);

type Tally = Record<string, number>;
const add = (tally: Tally, key: string) => {
  tally[key] = (tally[key] ?? 0) + 1;
};

/** Writes the distribution where the run's output shows it (the linter keeps console out of code). */
function report(front: string, sent: number, tally: Tally, kinds: Tally): void {
  const rows = Object.entries(tally)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `    ${k.padEnd(28)} ${v}`);
  process.stderr.write(
    `fuzz ${front}: seed ${SEED}, ${sent} messages (${Object.entries(kinds)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")})\n${rows.join("\n")}\n`,
  );
}

/** The class of a JSON-RPC message: `error <code>`, `result`, or `notification <method>`. */
/** An answer goes to the probe waiting on its id; anything else is tallied by kind. */
function deliver(message: unknown, waiting: Map<string, (message: unknown) => void>, tally: Tally): void {
  const id = (message as { id?: unknown }).id;
  const resolve = typeof id === "string" ? waiting.get(id) : undefined;
  if (resolve === undefined) add(tally, classOf(message));
  else {
    waiting.delete(id as string);
    resolve(message);
  }
}

function classOf(message: unknown): string {
  if (typeof message !== "object" || message === null) return "not-an-object";
  const m = message as { error?: { code?: unknown }; result?: unknown; method?: unknown };
  if (m.error !== undefined) return `error ${String(m.error.code)}`;
  if (m.result !== undefined) return "result";
  if (typeof m.method === "string") return `message ${m.method}`;
  return "other";
}

const sentinel = (n: number | string) =>
  rev2026Request(`sentinel-${n}`, "tools/call", {
    name: "workspace__read_file",
    arguments: { path: "note.txt" },
  });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-fuzz-"));
  await writeFile(join(dir, "note.txt"), "fuzz-proof note\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("fuzzing the HTTP and WebSocket fronts of mcplex serve --http", {
  timeout: attackTimeout(30_000, 400_000),
}, () => {
  let gw: ServeProcess;
  beforeAll(async () => {
    gw = await serveHttp([], { cwd: dir });
  });
  afterAll(() => gw?.stop());

  async function expectHealthy(): Promise<void> {
    const res = await postRev2026(gw.url, sentinel("http"));
    expect(res.status).toBe(200);
    expect(resultText((res.json as { result: unknown }).result)).toContain("fuzz-proof note");
    expect(gw.child.exitCode).toBeNull();
    expect(gw.child.signalCode).toBeNull();
  }

  it(`answers ${COUNT} malformed POSTs with 4xx or in-band errors and keeps serving`, async () => {
    const r = new Rng(SEED);
    const init = await rawHttp(gw.url, {
      headers: { "content-type": "application/json", accept: "application/json" },
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "fuzz", version: "1" },
        },
      },
    });
    const sessionId = String(init.headers["mcp-session-id"]);
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const tally: Tally = {};
    const kinds: Tally = {};
    const failures: string[] = [];
    const send = (c: FuzzCase, index: number) => {
      const { method, headers } = fuzzHeaders(r, c, sessionId);
      add(kinds, c.kind);
      return new Promise<void>((done) => {
        const req = request(gw.url, { method, headers, agent }, (res) => {
          const type = String(res.headers["content-type"] ?? "");
          if (type.startsWith("text/event-stream") && method === "GET") {
            add(tally, `${res.statusCode} sse-stream`);
            res.destroy();
            return done();
          }
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", () => {});
          res.on("close", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let key: string;
            if (text === "") key = "empty";
            else if (type.startsWith("text/event-stream")) key = "sse";
            else {
              try {
                key = classOf(JSON.parse(text));
              } catch {
                key = "not-json";
              }
            }
            const status = res.statusCode ?? 0;
            add(tally, `${status} ${key}`);
            if (status >= 500)
              failures.push(`#${index} ${c.kind} ${method}: ${status} ${text.slice(0, 200)}`);
            done();
          });
        });
        req.setTimeout(3000, () => {
          add(tally, "no answer in 3 s");
          failures.push(
            `#${index} ${c.kind} ${method} ${JSON.stringify(headers)}: no answer, body ${c.body.subarray(0, 120).toString("utf8")}`,
          );
          req.destroy();
        });
        req.on("error", (error: NodeJS.ErrnoException) => {
          if (req.destroyed && failures.at(-1)?.startsWith(`#${index} `)) return done();
          add(tally, `socket ${error.code ?? error.message}`);
          done();
        });
        if (method === "GET" || method === "HEAD") req.end();
        else req.end(c.body);
      });
    };
    const started = Date.now();
    let sent = 0;
    const workers = Array.from({ length: 16 }, async () => {
      while (sent < COUNT && Date.now() - started < BUDGET_MS) {
        const index = sent++;
        await send(fuzzCase(r), index);
      }
    });
    await Promise.all(workers);
    agent.destroy();
    report("HTTP POST /mcp", sent, tally, kinds);
    expect(sent).toBeGreaterThanOrEqual(Math.min(COUNT, 500));
    expect(failures, `seed ${SEED}`).toEqual([]);
    await expectHealthy();
  });

  it(`answers ${COUNT} malformed WebSocket frames with errors or a close, and keeps serving`, async () => {
    const r = new Rng(SEED + 1);
    const tally: Tally = {};
    const kinds: Tally = {};
    let ws: WebSocket | undefined;
    const waiting = new Map<string, (m: unknown) => void>();
    const connect = async () => {
      const socket = new WebSocket(gw.wsUrl, "mcp", { maxPayload: 64 * 1024 * 1024 });
      socket.on("message", (data) => {
        let message: unknown;
        try {
          message = JSON.parse(String(data));
        } catch {
          add(tally, "not-json");
          return;
        }
        deliver(message, waiting, tally);
      });
      socket.on("close", (code) => add(tally, `close ${code}`));
      socket.on("error", () => {});
      await once(socket, "open");
      ws = socket;
    };
    /** Sends a correct request and waits for its answer: proof the socket (or a new one) still serves. */
    const probe = async (n: number) => {
      if (ws === undefined || ws.readyState !== WebSocket.OPEN) await connect();
      const message = sentinel(`ws-${n}`);
      const answered = new Promise<unknown>((done) => waiting.set(String(message.id), done));
      const closed = once(ws!, "close").then(() => "closed" as const);
      ws!.send(JSON.stringify(message));
      const outcome = await Promise.race([answered, closed]);
      if (outcome === "closed") return probe(n);
      expect(resultText((outcome as { result: unknown }).result)).toContain("fuzz-proof note");
    };
    await connect();
    const started = Date.now();
    let sent = 0;
    while (sent < COUNT && Date.now() - started < BUDGET_MS) {
      if (ws!.readyState !== WebSocket.OPEN) await connect();
      const c = fuzzCase(r);
      const binary = r.chance(0.15);
      add(kinds, binary ? `${c.kind} (binary)` : c.kind);
      ws!.send(c.body, { binary });
      sent++;
      // Invalid UTF-8 in a text frame closes the socket (1007): wait for that before going on.
      if (sent % 50 === 0 || (c.kind === "invalid-utf8" && !binary)) await probe(sent);
    }
    await probe(sent);
    ws?.close();
    report("WebSocket /ws", sent, tally, kinds);
    expect(sent).toBeGreaterThanOrEqual(Math.min(COUNT, 500));
    expect(Object.keys(tally).filter((k) => k === "not-json" || k === "not-an-object")).toEqual([]);
    await expectHealthy();
  });
});

describe("fuzzing mcplex serve --stdio", { timeout: attackTimeout(30_000, 400_000) }, () => {
  it(`answers ${COUNT} malformed lines with JSON-RPC errors and keeps serving`, async () => {
    const r = new Rng(SEED + 2);
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, "serve", "--stdio"], {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr.resume();
    const tally: Tally = {};
    const kinds: Tally = {};
    const waiting = new Map<string, (m: unknown) => void>();
    createInterface({ input: child.stdout }).on("line", (line) => {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        add(tally, `not-json stdout: ${line.slice(0, 60)}`);
        return;
      }
      deliver(message, waiting, tally);
    });
    const exited = once(child, "exit");
    const write = (data: Buffer | string) =>
      new Promise<void>((done) => (child.stdin.write(data) ? done() : child.stdin.once("drain", done)));
    const probe = async (n: number) => {
      const message = sentinel(`stdio-${n}`);
      const answered = new Promise<unknown>((done) => waiting.set(String(message.id), done));
      await write(`${JSON.stringify(message)}\n`);
      const outcome = await Promise.race([answered, exited.then(() => "exited" as const)]);
      expect(outcome, `seed ${SEED + 2}: the gateway exited`).not.toBe("exited");
      expect(resultText((outcome as { result: unknown }).result)).toContain("fuzz-proof note");
    };
    try {
      await probe(0);
      const started = Date.now();
      let sent = 0;
      while (sent < COUNT && Date.now() - started < BUDGET_MS) {
        const c = fuzzCase(r);
        add(kinds, c.kind);
        await write(Buffer.concat([c.body, Buffer.from("\n")]));
        sent++;
        if (sent % 100 === 0) await probe(sent);
      }
      await probe(sent);
      report("stdio", sent, tally, kinds);
      expect(sent).toBeGreaterThanOrEqual(Math.min(COUNT, 500));
      expect(Object.keys(tally).filter((k) => k.startsWith("not-"))).toEqual([]);
      expect(child.exitCode).toBeNull();
    } finally {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  });
});
